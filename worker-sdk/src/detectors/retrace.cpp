#include "retrace.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace loopguard::sdk {
namespace {

using seen_list = std::vector<retrace_state::seen_result>;

const retrace_state::seen_result* find(const seen_list& list, std::uint64_t result) {
  const auto it =
      std::find_if(list.begin(), list.end(), [&](const auto& r) { return r.result == result; });
  return it == list.end() ? nullptr : &*it;
}

// Bounded: past kMaxSeen entries the older half is forgotten.
void remember(seen_list& list, retrace_state::seen_result r) {
  if (list.size() >= retrace_state::kMaxSeen) {
    list.erase(list.begin(), std::next(list.begin(), retrace_state::kMaxSeen / 2));
  }
  list.push_back(r);
}

}  // namespace

streak_step<retrace_state> retrace_result(retrace_state s, const call_record& answered,
                                          std::size_t output_bytes, std::size_t event_index,
                                          const retrace_rule& rule) {
  if (answered.progress) {  // a successful new change: what was seen may read differently now
    const bool was_counting = s.count > 0;
    s.clear();
    return {std::move(s), std::nullopt, was_counting};
  }
  if (!answered.ok || answered.unproductive || output_bytes < rule.min_bytes) return {s};
  const retrace_state::seen_result* first = find(s.seen, answered.result);
  if (first == nullptr) {
    remember(s.seen, {answered.result, answered.fp.exact});
    return {std::move(s)};
  }
  if (first->call == answered.fp.exact) return {std::move(s)};
  if (s.count++ == 0) s.first = event_index;
  std::optional<finding> found;
  if (rule.enabled && s.count >= rule.steps.warn_at) {
    finding f;
    f.detector = detector_id::retrace;
    f.identity = identity_of(fixed_loop::retraced_results);
    f.count = s.count;
    f.steps = rule.steps;
    f.loop_start = s.first;
    f.confidence = 0.7;
    f.tool = answered.tool;
    found = std::move(f);
  }
  return {std::move(s), std::move(found)};
}

}  // namespace loopguard::sdk
