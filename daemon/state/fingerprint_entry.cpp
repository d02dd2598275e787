#include "state/fingerprint_entry.hpp"

#include <array>
#include <cstring>
#include <utility>

namespace loopguard::daemon {

namespace {
constexpr std::size_t kHeader = 2 * sizeof(std::uint32_t);
}  // namespace

fingerprint_label::fingerprint_label(std::string_view tool, std::string_view summary) {
  if (tool.empty() && summary.empty()) return;
  const auto lengths = std::array<std::uint32_t, 2>{static_cast<std::uint32_t>(tool.size()),
                                                    static_cast<std::uint32_t>(summary.size())};
  block_ = std::make_unique_for_overwrite<char[]>(kHeader + tool.size() + summary.size());
  std::memcpy(block_.get(), lengths.data(), kHeader);
  if (!tool.empty()) std::memcpy(block_.get() + kHeader, tool.data(), tool.size());
  if (!summary.empty()) {
    std::memcpy(block_.get() + kHeader + tool.size(), summary.data(), summary.size());
  }
}

std::uint32_t fingerprint_label::length(std::size_t i) const {
  std::uint32_t n = 0;
  if (block_) std::memcpy(&n, block_.get() + i * sizeof(n), sizeof(n));
  return n;
}

std::string_view fingerprint_label::tool() const {
  if (!block_) return {};
  return {block_.get() + kHeader, length(0)};
}

std::string_view fingerprint_label::summary() const {
  if (!block_) return {};
  return {block_.get() + kHeader + length(0), length(1)};
}

void fingerprint_entry::assign(fingerprint_stats&& row) {
  calls = row.calls;
  counted = row.counted;
  first_seen = row.first_seen;
  last_seen = row.last_seen;
  window = std::move(row.window);
  workers = std::move(row.workers);
  results = std::move(row.results);
  wasted = row.wasted;
  label = fingerprint_label(row.tool, row.summary);
  level = row.level;
  const bool reported = row.level != severity::none || row.level_t != 0 || row.level_calls != 0 ||
                        row.level_workers != 0 || !row.booked.empty();
  if (reported || report_) {
    declared_report& r = report();
    r.level_t = row.level_t;
    r.level_calls = row.level_calls;
    r.level_workers = row.level_workers;
    r.booked = row.booked;
  }
}

fingerprint_stats fingerprint_entry::row() const {
  fingerprint_stats r;
  r.tool = label.tool();
  r.summary = label.summary();
  r.calls = calls;
  r.counted = counted;
  r.first_seen = first_seen;
  r.last_seen = last_seen;
  r.level = level;
  r.level_t = level_t();
  r.level_calls = level_calls();
  r.level_workers = level_workers();
  r.workers = workers;
  r.window = window;
  r.results = results;
  r.wasted = wasted;
  r.booked = booked();
  return r;
}

fingerprint_entry::fingerprint_entry(single_call_entry&& s)
    : calls(1),
      counted(s.counted),
      first_seen(s.last_seen),
      last_seen(s.last_seen),
      label(std::move(s.label)),
      in_top(s.in_top),
      changed(s.changed) {
  workers.push_back(s.worker);
  if (s.has_result) results.push_back(s.result);
  if (s.in_window) {
    window.push_back({s.last_seen, s.worker, s.counted != 0});
    tallies.push_back({s.worker, s.counted, 1});
    window_counted = s.counted;
  }
}

namespace {
// Bit for bit (same_bits): the small form gives back one time for first_seen, last_seen and the
// window's call, and +0 for what it leaves out.
bool nothing(const protocol::cost& c) {
  return c.tokens == 0 && same_bits(c.amount, 0);
}
}  // namespace

bool single_call_entry::fits(const fingerprint_entry& f) {
  return f.calls == 1 && f.counted <= 1 && same_bits(f.first_seen, f.last_seen) &&
         f.workers.size() == 1 && f.results.size() <= 1 && nothing(f.wasted) &&
         f.level == severity::none && !f.has_report() &&
         (f.window.empty() ||
          (f.window.size() == 1 && same_bits(f.window[0].t, f.last_seen) &&
           f.window[0].worker == f.workers[0] && f.window[0].counted == (f.counted == 1)));
}

bool single_call_entry::fits(const fingerprint_stats& r) {
  return r.calls == 1 && r.counted <= 1 && same_bits(r.first_seen, r.last_seen) &&
         r.workers.size() == 1 && r.results.size() <= 1 && nothing(r.wasted) && nothing(r.booked) &&
         r.level == severity::none && same_bits(r.level_t, 0) && r.level_calls == 0 &&
         r.level_workers == 0 &&
         (r.window.empty() ||
          (r.window.size() == 1 && same_bits(r.window[0].t, r.last_seen) &&
           r.window[0].worker == r.workers[0] && r.window[0].counted == (r.counted == 1)));
}

single_call_entry::single_call_entry(fingerprint_entry&& f)
    : last_seen(f.last_seen),
      result(f.results.empty() ? 0 : f.results[0]),
      label(std::move(f.label)),
      worker(f.workers[0]),
      counted(static_cast<std::uint8_t>(f.counted)),
      in_top(f.in_top),
      changed(f.changed),
      has_result(!f.results.empty()),
      in_window(!f.window.empty()) {}

single_call_entry::single_call_entry(fingerprint_stats&& r) : single_call_entry(unlabelled(r)) {
  label = fingerprint_label(r.tool, r.summary);
}

single_call_entry single_call_entry::unlabelled(const fingerprint_stats& r) {
  single_call_entry e;
  e.last_seen = r.last_seen;
  e.result = r.results.empty() ? 0 : r.results[0];
  e.worker = r.workers[0];
  e.counted = static_cast<std::uint8_t>(r.counted);
  e.has_result = !r.results.empty();
  e.in_window = !r.window.empty();
  return e;
}

fingerprint_stats single_call_entry::row() const {
  fingerprint_stats r;
  r.tool = label.tool();
  r.summary = label.summary();
  r.calls = 1;
  r.counted = counted;
  r.first_seen = r.last_seen = last_seen;
  r.workers.push_back(worker);
  if (has_result) r.results.push_back(result);
  if (in_window) r.window.push_back({last_seen, worker, counted != 0});
  return r;
}

}  // namespace loopguard::daemon
