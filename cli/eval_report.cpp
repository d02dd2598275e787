#include "eval_report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace loopguard::cli {
namespace {

bool is_loop(const eval_trace& t) {
  return t.label && t.label->loop;
}

void count(eval_totals& t, const eval_trace& e) {
  if (!e.label) return;
  const bool agrees = e.disagreement.empty();
  if (e.label->loop) {
    ++t.loops;
    if (agrees) {
      ++t.caught;
      if (e.label->within && e.first) {
        t.delays.push_back(static_cast<long long>(e.first->event) -
                           static_cast<long long>(*e.label->within));
      }
    } else {
      ++t.missed;
    }
  } else {
    ++t.healthy;
    if (!agrees) ++t.false_alarms;
  }
}

std::string fixed(std::optional<double> v, int decimals) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, *v);
  return buf;
}

std::string signed_int(std::optional<long long> v) {
  if (!v) return "-";
  return (*v > 0 ? "+" : "") + std::to_string(*v);
}

// Columns padded to their widest cell; the first column left-aligned, the others right-aligned.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c == 0 ? row[c] + pad : "  " + pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

std::vector<std::string> totals_row(const std::string& name, const eval_totals& t) {
  return {name,
          std::to_string(t.loops),
          std::to_string(t.caught),
          std::to_string(t.missed),
          std::to_string(t.healthy),
          std::to_string(t.false_alarms),
          fixed(t.precision(), 2),
          fixed(t.recall(), 2),
          t.median_delay() ? (*t.median_delay() > 0 ? "+" : "") + fixed(t.median_delay(), 1) : "-",
          signed_int(t.worst_delay())};
}

std::string label_text(const trace_expect& x) {
  std::string s = x.loop ? "loop" : "healthy";
  if (x.loop && x.within) s += " within " + std::to_string(*x.within);
  if (!x.detector.empty()) s += " (" + x.detector + ")";
  return s;
}

std::string first_text(const std::optional<first_seen>& f) {
  if (!f) return "no detection";
  std::string s = "first " + f->detector + " " + std::string(to_string(f->level)) + " at event " +
                  std::to_string(f->event);
  if (!f->tool.empty()) s += " (" + f->tool + ")";
  return s;
}

nlohmann::ordered_json optional_number(std::optional<double> v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json totals_json(const eval_totals& t) {
  nlohmann::ordered_json j;
  j["loops"] = t.loops;
  j["caught"] = t.caught;
  j["missed"] = t.missed;
  j["healthy"] = t.healthy;
  j["false_alarms"] = t.false_alarms;
  j["precision"] = optional_number(t.precision());
  j["recall"] = optional_number(t.recall());
  j["median_delay"] = optional_number(t.median_delay());
  j["worst_delay"] = t.worst_delay() ? nlohmann::ordered_json(*t.worst_delay()) : nullptr;
  return j;
}

nlohmann::ordered_json first_json(const std::optional<first_seen>& f) {
  if (!f) return nullptr;
  return {{"event", f->event},
          {"detector", f->detector},
          {"severity", std::string(to_string(f->level))},
          {"tool", f->tool}};
}

nlohmann::ordered_json label_json(const trace_expect& x) {
  nlohmann::ordered_json j{{"loop", x.loop}};
  j["within"] = x.within ? nlohmann::ordered_json(*x.within) : nullptr;
  j["detector"] = x.detector;
  return j;
}

// Detections per 100 tool calls, by detector.
std::map<std::string, double> rates(const eval_trace& t) {
  std::map<std::string, double> out;
  if (t.tool_calls == 0) return out;
  for (const auto& [d, n] : t.detections) {
    out[d] = 100.0 * static_cast<double>(n) / static_cast<double>(t.tool_calls);
  }
  return out;
}

}  // namespace

std::string source_of(const std::string& path, const std::string& agent) {
  if (!agent.empty()) return agent;
  const std::filesystem::path p(path);
  const std::string stem = p.stem().string();
  if (stem.rfind("real-", 0) == 0) {
    const auto end = stem.find('-', 5);
    if (end != std::string::npos && end > 5) return stem.substr(5, end - 5);
  }
  const std::string dir = p.parent_path().filename().string();
  return dir.empty() ? "." : dir;
}

std::optional<double> eval_totals::precision() const {
  if (caught + false_alarms == 0) return std::nullopt;
  return static_cast<double>(caught) / static_cast<double>(caught + false_alarms);
}

std::optional<double> eval_totals::recall() const {
  if (loops == 0) return std::nullopt;
  return static_cast<double>(caught) / static_cast<double>(loops);
}

std::optional<double> eval_totals::median_delay() const {
  if (delays.empty()) return std::nullopt;
  std::vector<long long> d = delays;
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size();
  return n % 2 == 1 ? static_cast<double>(d[n / 2])
                    : (static_cast<double>(d[n / 2 - 1]) + static_cast<double>(d[n / 2])) / 2;
}

std::optional<long long> eval_totals::worst_delay() const {
  if (delays.empty()) return std::nullopt;
  return *std::max_element(delays.begin(), delays.end());
}

std::size_t eval_report::disagreements() const {
  return static_cast<std::size_t>(std::count_if(traces.begin(), traces.end(), [](const auto& t) {
    return t.label && !t.disagreement.empty();
  }));
}

eval_report make_report(std::string preset, std::vector<eval_trace> traces,
                        std::vector<std::string> errors) {
  eval_report r;
  r.preset = std::move(preset);
  r.errors = std::move(errors);
  for (const eval_trace& t : traces) {
    count(r.all, t);
    if (t.label) count(r.by_source[t.source], t);
    if (!t.label || !t.first) continue;
    auto& [caught, alarms] = r.by_detector[t.first->detector];
    if (is_loop(t) && t.disagreement.empty()) ++caught;
    if (!is_loop(t)) ++alarms;
  }
  r.traces = std::move(traces);
  return r;
}

std::string to_text(const eval_report& r) {
  std::size_t labelled = 0;
  for (const auto& t : r.traces) labelled += t.label ? 1U : 0U;
  std::string out = "loopguard eval: " + std::to_string(labelled) + " labelled recordings (" +
                    std::to_string(r.all.loops) + " loops, " + std::to_string(r.all.healthy) +
                    " healthy), " + std::to_string(r.traces.size() - labelled) +
                    " unlabelled; preset " + r.preset + "\n";
  if (labelled > 0) {
    std::vector<std::vector<std::string>> rows{{"source", "loops", "caught", "missed", "healthy",
                                                "false alarms", "precision", "recall",
                                                "median delay", "worst delay"}};
    for (const auto& [name, t] : r.by_source) rows.push_back(totals_row(name, t));
    rows.push_back(totals_row("all", r.all));
    out += "\n" + table(rows);
    std::vector<std::vector<std::string>> det{
        {"detector", "loops caught first", "false alarms first"}};
    for (const auto& [name, counts] : r.by_detector) {
      det.push_back({name, std::to_string(counts.first), std::to_string(counts.second)});
    }
    if (det.size() > 1) out += "\n" + table(det);
    out += "\ndisagreements: " + std::to_string(r.disagreements()) + "\n";
    for (const auto& t : r.traces) {
      if (!t.label || t.disagreement.empty()) continue;
      out += "  " + t.file + ": " + label_text(*t.label) + "; " + first_text(t.first) + " (" +
             t.disagreement + ")\n";
    }
  }
  std::vector<std::vector<std::string>> unl{
      {"unlabelled", "tool calls", "detections per 100 calls"}};
  for (const auto& t : r.traces) {
    if (t.label) continue;
    std::string per;
    for (const auto& [d, x] : rates(t)) per += (per.empty() ? "" : ", ") + d + " " + fixed(x, 1);
    unl.push_back({t.file, std::to_string(t.tool_calls), per.empty() ? "none" : per});
  }
  if (unl.size() > 1) out += "\n" + table(unl);
  if (!r.errors.empty()) {
    out += "\nunreadable: " + std::to_string(r.errors.size()) + "\n";
    for (const auto& e : r.errors) out += "  " + e + "\n";
  }
  return out;
}

nlohmann::ordered_json to_json(const eval_report& r) {
  nlohmann::ordered_json j;
  j["preset"] = r.preset;
  j["all"] = totals_json(r.all);
  nlohmann::ordered_json sources = nlohmann::ordered_json::object();
  for (const auto& [name, t] : r.by_source) sources[name] = totals_json(t);
  j["by_source"] = std::move(sources);
  nlohmann::ordered_json dets = nlohmann::ordered_json::object();
  for (const auto& [name, c] : r.by_detector) {
    dets[name] = {{"loops_caught_first", c.first}, {"false_alarms_first", c.second}};
  }
  j["by_detector"] = std::move(dets);
  j["disagreements"] = r.disagreements();
  nlohmann::ordered_json traces = nlohmann::ordered_json::array();
  for (const auto& t : r.traces) {
    nlohmann::ordered_json x;
    x["file"] = t.file;
    x["source"] = t.source;
    x["label"] = t.label ? label_json(*t.label) : nullptr;
    x["first"] = first_json(t.first);
    if (t.label) {
      x["agrees"] = t.disagreement.empty();
      x["reason"] = t.disagreement;
      x["delay"] = t.label->loop && t.label->within && t.first
                       ? nlohmann::ordered_json(static_cast<long long>(t.first->event) -
                                                static_cast<long long>(*t.label->within))
                       : nullptr;
    }
    x["tool_calls"] = t.tool_calls;
    x["detections"] = t.detections;
    if (!t.label) x["per_100_calls"] = rates(t);
    traces.push_back(std::move(x));
  }
  j["traces"] = std::move(traces);
  j["errors"] = r.errors;
  return j;
}

}  // namespace loopguard::cli
