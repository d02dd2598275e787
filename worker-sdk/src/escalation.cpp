#include "escalation.hpp"

#include <algorithm>

namespace loopguard::sdk {

severity count_severity(std::uint32_t count, const ladder& steps) {
  if (steps.critical_at > 0 && count >= steps.critical_at) return severity::critical;
  if (steps.warn_at > 0 && count >= steps.warn_at) return severity::warn;
  return severity::none;
}

severity escalation::judge(const finding& f, std::uint32_t& occurrence) {
  severity s = f.hard_stop ? severity::terminate : count_severity(f.count, f.steps);
  if (loops_.size() > kMaxLoops) forget_inactive();
  auto& st = loops_[{f.detector, f.identity}];
  if (s == severity::none) {
    st.active = false;
    occurrence = st.detections;
    return s;
  }
  if (!st.active || rule_.every_firing_counts) {
    ++st.detections;
    st.active = true;
    st.last_level = severity::none;
  }
  occurrence = st.detections;
  if (rule_.terminate_after > 0 && st.detections >= rule_.terminate_after) {
    s = severity::terminate;
  }
  if (!rule_.repeat_nudges && s <= st.last_level) return severity::none;  // said already
  st.last_level = std::max(st.last_level, s);
  return s;
}

void escalation::forget_inactive() {
  for (auto it = loops_.begin(); it != loops_.end();) {
    it = it->second.active ? std::next(it) : loops_.erase(it);
  }
}

void escalation::quiet(detector_id d, std::uint64_t identity) {
  auto it = loops_.find({d, identity});
  if (it != loops_.end()) it->second.active = false;
}

void escalation::quiet_all(detector_id d) {
  for (auto& [key, st] : loops_) {
    if (key.first == d) st.active = false;
  }
}

}  // namespace loopguard::sdk
