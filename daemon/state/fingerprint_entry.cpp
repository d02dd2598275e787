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

}  // namespace loopguard::daemon
