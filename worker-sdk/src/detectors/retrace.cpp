#include "retrace.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace loopguard::sdk {
namespace {

using seen_list = std::vector<retrace_state::seen_result>;

template <class Key>
retrace_state::seen_result* find(seen_list& list, Key key) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const auto& r) { return key(r); });
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

std::uint32_t retrace_state::count() const {
  return static_cast<std::uint32_t>(
      std::count_if(recent.begin(), recent.end(), [](const looked_at& r) { return r.retraced; }));
}

streak_step<retrace_state> retrace_result(retrace_state s, const call_record& answered,
                                          std::size_t output_bytes, std::size_t event_index,
                                          const retrace_rule& rule) {
  if (answered.progress) {  // a successful new change: what was seen may read differently now
    const bool was_counting = s.count() > 0;
    s.clear();
    return {std::move(s), std::nullopt, was_counting};
  }
  if (!answered.ok || answered.unproductive || output_bytes < rule.min_bytes) return {std::move(s)};
  const std::uint64_t result = answered.result;
  const std::uint64_t call = answered.fp.exact;
  const retrace_state::seen_result* first =
      find(s.seen, [&](const auto& r) { return r.result == result; });
  retrace_state::seen_result* last = find(s.latest, [&](const auto& r) { return r.call == call; });
  const bool repeats_itself = last != nullptr && last->result == result;
  const bool retraced =
      first != nullptr && first->call != call && first->turn < answered.turn && !repeats_itself;
  if (first == nullptr) remember(s.seen, {result, call, answered.turn});
  if (last != nullptr) {
    last->result = result;
  } else {
    remember(s.latest, {result, call, answered.turn});
  }
  s.recent.push_back({event_index, retraced});
  while (s.recent.size() > rule.window) s.recent.pop_front();
  const std::uint32_t count = s.count();
  if (!retraced || !rule.enabled || count < rule.steps.warn_at) return {std::move(s)};
  finding f;
  f.detector = detector_id::retrace;
  f.identity = identity_of(fixed_loop::retraced_results);
  f.count = count;
  f.steps = rule.steps;
  f.loop_start = std::find_if(s.recent.begin(), s.recent.end(), [](const auto& r) {
                   return r.retraced;
                 })->event_index;
  f.confidence = 0.7;
  f.tool = answered.tool;
  return {std::move(s), std::move(f)};
}

}  // namespace loopguard::sdk
