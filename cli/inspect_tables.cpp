#include "inspect_tables.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "display_text.hpp"
#include "loopguard/canonical_json.hpp"
#include "state/nudge_text.hpp"
#include "text_table.hpp"

namespace loopguard::cli {
namespace {

// Column widths (display columns) beyond which a cell is cut with "…".
constexpr std::size_t kNameWidth = 40;
constexpr std::size_t kToolWidth = 24;
constexpr std::size_t kSummaryWidth = 48;
constexpr std::size_t kMessageWidth = 72;
constexpr std::size_t kCountsWidth = 40;

std::string num(std::uint64_t n) {
  return std::to_string(n);
}

std::string cost_text(const protocol::cost& c, std::string_view unit) {
  const std::string words = daemon::cost_words(c, unit);
  return words.empty() ? "-" : fit(words, kToolWidth);
}

std::string level_text(std::string_view level) {
  return level.empty() || level == "none" ? "-" : std::string(level);
}

std::string budget_text(const swarm_summary_view& s) {
  if ((s.budget_level.empty() || s.budget_level == "none") && s.budget_used <= 0) return "-";
  const auto percent = static_cast<long long>(std::floor(s.budget_used * 100));
  return level_text(s.budget_level) + " " + std::to_string(percent) + "%";
}

// "exact=6 cycle=1": each detector's detections, all levels together.
std::string counts_text(const worker_view& w) {
  std::string out;
  for (const auto& [detector, n] : w.counts) {
    if (!out.empty()) out += ' ';
    out += detector + "=" + num(n[0] + n[1] + n[2]);
  }
  return out.empty() ? "-" : fit(out, kCountsWidth);
}

std::string heading(const swarm_detail_view& d) {
  const swarm_summary_view& s = d.summary;
  std::string out = "swarm ";
  append_json_string(out, fit(s.swarm, 200));
  out += ": " + num(s.workers) + " workers";
  if (d.connected) out += " (" + num(d.connected->size()) + " connected)";
  out += ", " + num(s.fingerprints) + " fingerprints, " + num(s.calls) + " calls, " +
         num(s.verdicts) + " active verdicts\n";
  out += "spent " + cost_text(s.spent, s.unit) + "; wasted " + cost_text(s.wasted, s.unit) +
         "; budget " + budget_text(s) + "\n";
  return out;
}

std::string workers_text(const swarm_detail_view& d) {
  const bool show_connected = d.connected.has_value();
  std::set<std::string_view> connected;
  if (show_connected) connected.insert(d.connected->begin(), d.connected->end());
  std::vector<std::string> header = {"WORKER", "MODE"};
  std::vector<align> aligns = {align::left, align::left};
  if (show_connected) {
    header.emplace_back("CONNECTED");
    aligns.push_back(align::left);
  }
  header.insert(header.end(), {"DETECTIONS", "BY DETECTOR", "LAST"});
  aligns.insert(aligns.end(), {align::right, align::left, align::left});
  text_table t(std::move(header), std::move(aligns));
  const std::size_t shown = std::min(d.workers.size(), kMaxWorkerRows);
  for (std::size_t i = 0; i < shown; ++i) {
    const worker_view& w = d.workers[i];
    std::vector<std::string> row = {fit(w.name, kNameWidth), w.mode.empty() ? "-" : fit(w.mode, 8)};
    if (show_connected) row.emplace_back(connected.contains(w.name) ? "yes" : "no");
    const std::string last =
        w.last_detector.empty() ? "-" : fit(w.last_detector + " " + w.last_level, kToolWidth);
    row.insert(row.end(), {num(w.detections), counts_text(w), last});
    t.add_row(std::move(row));
  }
  if (t.empty()) return "Workers: none\n";
  std::string out = "Workers\n" + t.render();
  if (shown < d.workers.size()) {
    out += "... and " + num(d.workers.size() - shown) + " more (--json lists them all)\n";
  }
  return out;
}

std::string top_text(const swarm_detail_view& d) {
  text_table t({"KIND", "TOOL", "SUMMARY", "CALLS", "COUNTED", "WORKERS", "LEVEL", "WASTED"},
               {align::left, align::left, align::left, align::right, align::right, align::right,
                align::left, align::left});
  for (const fingerprint_view& f : d.top) {
    t.add_row({fit(f.kind, 12), fit(f.tool, kToolWidth), fit(f.summary, kSummaryWidth),
               num(f.calls), num(f.counted), num(f.workers), level_text(fit(f.level, 12)),
               cost_text(f.wasted, d.summary.unit)});
  }
  return t.empty() ? "Top fingerprints: none\n" : "Top fingerprints\n" + t.render();
}

std::string verdicts_text(const swarm_detail_view& d) {
  text_table t({"LEVEL", "KIND", "TOOL", "CALLS", "WORKERS", "COST", "MESSAGE"},
               {align::left, align::left, align::left, align::right, align::right, align::left,
                align::left});
  for (const verdict_view& v : d.verdicts) {
    t.add_row({fit(v.level, 12), fit(v.kind, 12), v.tool.empty() ? "-" : fit(v.tool, kToolWidth),
               num(v.calls), num(v.workers), cost_text(v.cost, d.summary.unit),
               fit(v.message, kMessageWidth)});
  }
  return t.empty() ? "Active verdicts: none\n" : "Active verdicts\n" + t.render();
}

}  // namespace

std::string swarms_text(const std::vector<swarm_summary_view>& swarms) {
  if (swarms.empty()) return "no swarms\n";
  const bool daemons = std::any_of(swarms.begin(), swarms.end(),
                                   [](const swarm_summary_view& s) { return !s.daemon.empty(); });
  std::vector<std::string> header = {"SWARM"};
  std::vector<align> aligns = {align::left};
  if (daemons) {
    header.emplace_back("DAEMON");
    aligns.push_back(align::left);
  }
  header.insert(header.end(),
                {"WORKERS", "FINGERPRINTS", "CALLS", "VERDICTS", "SPENT", "WASTED", "BUDGET"});
  aligns.insert(aligns.end(), {align::right, align::right, align::right, align::right, align::left,
                               align::left, align::left});
  text_table t(std::move(header), std::move(aligns));
  for (const swarm_summary_view& s : swarms) {
    std::vector<std::string> row = {fit(s.swarm, kNameWidth)};
    if (daemons) row.push_back(fit(s.daemon, kNameWidth));
    row.insert(row.end(),
               {num(s.workers), num(s.fingerprints), num(s.calls), num(s.verdicts),
                cost_text(s.spent, s.unit), cost_text(s.wasted, s.unit), budget_text(s)});
    t.add_row(std::move(row));
  }
  return t.render();
}

std::string swarm_text(const swarm_detail_view& detail) {
  return heading(detail) + "\n" + workers_text(detail) + "\n" + top_text(detail) + "\n" +
         verdicts_text(detail);
}

}  // namespace loopguard::cli
