#include "state/restore_batch.hpp"

#include <string_view>
#include <utility>

#include "loopguard/utf8.hpp"

namespace loopguard::daemon {

void restore_batch::add(fingerprint_row& row) {
  if (runs_.empty() || runs_.back().given != row.swarm) {
    // Ends where it begins until a row is in: an add() that throws leaves a valid batch.
    runs_.push_back({row.swarm, row.swarm, items_.size(), 0});
    runs_.back().repaired = utf8::repair_in_place(runs_.back().swarm);
  }
  repaired_ += runs_.back().repaired;
  fingerprint_stats& f = row.stats;
  if (single_call_entry::fits(f)) {
    item& it = items_.emplace_back();
    it.key = row.key;
    it.small = single_call_entry::unlabelled(f);
    it.label_at = bytes_.size();
    it.tool_size = static_cast<std::uint32_t>(f.tool.size());
    it.summary_size = static_cast<std::uint32_t>(f.summary.size());
    bytes_.append(f.tool).append(f.summary);
  } else {
    repaired_ += utf8::repair_in_place(f.tool) + utf8::repair_in_place(f.summary);
    item& it = items_.emplace_back();
    it.key = row.key;
    it.full = static_cast<std::uint32_t>(fulls_.size());
    fulls_.push_back(std::move(f));
  }
  runs_.back().end = items_.size();
}

single_call_entry restore_batch::entry(item& it) {
  const std::string_view all(bytes_);
  std::string_view tool = all.substr(it.label_at, it.tool_size);
  std::string_view summary = all.substr(it.label_at + it.tool_size, it.summary_size);
  std::string fixed_tool, fixed_summary;  // only for strings that are not valid UTF-8
  if (!utf8::is_valid(tool)) {
    fixed_tool = tool;
    repaired_ += utf8::repair_in_place(fixed_tool);
    tool = fixed_tool;
  }
  if (!utf8::is_valid(summary)) {
    fixed_summary = summary;
    repaired_ += utf8::repair_in_place(fixed_summary);
    summary = fixed_summary;
  }
  it.small.label = fingerprint_label(tool, summary);
  return std::move(it.small);
}

void restore_batch::clear() {
  items_.clear();
  fulls_.clear();
  runs_.clear();
  bytes_.clear();
  repaired_ = 0;
}

}  // namespace loopguard::daemon
