#include "escalation.hpp"

#include <algorithm>

namespace loopguard::sdk {

severity count_severity(std::uint32_t count, const ladder& steps) {
  if (steps.terminate_at > 0 && count >= steps.terminate_at) return severity::terminate;
  if (steps.critical_at > 0 && count >= steps.critical_at) return severity::critical;
  if (steps.warn_at > 0 && count >= steps.warn_at) return severity::warn;
  return severity::none;
}

escalation::judgement escalation::judge(const finding& f) {
  severity s = f.hard_stop ? severity::terminate : count_severity(f.count, f.steps);
  if (loops_.size() > kMaxLoops) forget_inactive();
  auto& st = loops_[key{f.detector, f.identity}];
  if (s == severity::none) {
    if (st.active) deactivate(f.detector, f.identity);
    return {s, st.detections};
  }
  if (!st.active || rule_.every_firing_counts) {
    ++st.detections;
    if (!st.active) active_[static_cast<std::size_t>(f.detector)].push_back(f.identity);
    st.active = true;
    st.last_level = severity::none;
  }
  if (rule_.terminate_after > 0 && st.detections >= rule_.terminate_after) {
    s = severity::terminate;
  }
  if (!rule_.repeat_nudges && s <= st.last_level) {
    return {severity::none, st.detections};  // said already
  }
  st.last_level = std::max(st.last_level, s);
  return {s, st.detections};
}

void escalation::reset() {
  loops_.clear();
  for (auto& a : active_) a.clear();
}

void escalation::forget_loops_except(detector_id keep) {
  std::erase_if(loops_, [keep](const auto& kv) { return kv.first.detector != keep; });
  for (std::size_t d = 0; d < active_.size(); ++d) {
    if (static_cast<detector_id>(d) != keep) active_[d].clear();
  }
}

void escalation::forget_inactive() {
  std::erase_if(loops_, [](const auto& kv) { return !kv.second.active; });
}

void escalation::deactivate(detector_id d, std::uint64_t identity) {
  auto& ids = active_[static_cast<std::size_t>(d)];
  std::erase(ids, identity);
  auto it = loops_.find(key{d, identity});
  if (it != loops_.end()) it->second.active = false;
}

void escalation::quiet(detector_id d, std::uint64_t identity) {
  auto it = loops_.find(key{d, identity});
  if (it != loops_.end() && it->second.active) deactivate(d, identity);
}

void escalation::quiet_all(detector_id d) {
  auto& ids = active_[static_cast<std::size_t>(d)];
  for (std::uint64_t id : ids) {
    auto it = loops_.find(key{d, id});
    if (it != loops_.end()) it->second.active = false;
  }
  ids.clear();
}

}  // namespace loopguard::sdk
