// The two ladders (docs/detectors.md, "Escalation"): a finding's count gives warn or critical;
// the number of times the same loop has been detected (episodes) can raise it to terminate.
// An episode lasts while its rule keeps firing each time it is evaluated; once the rule is
// evaluated for that loop without firing (the agent left it), the next firing is a new episode.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "detectors/finding.hpp"
#include "loopguard/config.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::sdk {

class escalation {
 public:
  explicit escalation(const escalation_rule& rule) : rule_(rule) {}

  struct judgement {
    severity level = severity::none;  // none: below the ladder, or said already
    std::uint32_t occurrence = 0;     // times this loop has been detected, this one included
  };
  // Judges a finding, advancing the episode state.
  judgement judge(const finding& f);
  // The rule looked at this loop and did not fire: its episode, if any, is over.
  void quiet(detector_id d, std::uint64_t identity);
  // Every episode of this rule is over (rules without a per-loop identity, e.g. cycles).
  void quiet_all(detector_id d);
  // Forgets every loop (episodes and their counts) of every rule but `keep` (a resume).
  void forget_loops_except(detector_id keep);
  void reset();

 private:
  // Loops remembered at most; past it, the ones not active are forgotten (a run of weeks sees
  // many distinct calls).
  static constexpr std::size_t kMaxLoops = 10000;
  void forget_inactive();

  struct loop_state {
    std::uint32_t detections = 0;
    bool active = false;
    severity last_level = severity::none;  // the highest level said in this episode
  };
  struct key {
    detector_id detector;
    std::uint64_t identity;
    bool operator==(const key&) const = default;
  };
  struct key_hash {
    std::size_t operator()(const key& k) const {
      return static_cast<std::size_t>(k.identity * 0x9E3779B97F4A7C15ULL) ^
             static_cast<std::size_t>(k.detector);
    }
  };
  void deactivate(detector_id d, std::uint64_t identity);

  escalation_rule rule_;
  std::unordered_map<key, loop_state, key_hash> loops_;
  // The identities whose episode is active, per rule: quiet_all() touches only these.
  std::array<std::vector<std::uint64_t>, kDetectorCount> active_;
};

severity count_severity(std::uint32_t count, const ladder& steps);

// The action a verdict takes for its strongest detection, local or swarm-wide: terminate at
// terminate, reject at critical when the detection may reject the call, else nudge.
inline action action_for(severity level, bool rejects) {
  if (level == severity::terminate) return action::terminate;
  if (level == severity::critical && rejects) return action::reject;
  return action::nudge;
}

}  // namespace loopguard::sdk
