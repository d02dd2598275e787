// The two ladders (docs/detectors.md, "Escalation"): a finding's count gives warn or critical;
// the number of times the same loop has been detected (episodes) can raise it to terminate.
// An episode lasts while its rule keeps firing each time it is evaluated; once the rule is
// evaluated for that loop without firing (the agent left it), the next firing is a new episode.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "detectors/finding.hpp"
#include "loopguard/config.hpp"

namespace loopguard::sdk {

class escalation {
 public:
  explicit escalation(const escalation_rule& rule) : rule_(rule) {}

  // Severity for a finding (none when its count is below the ladder), advancing the episode
  // state. `occurrence` receives how many times this loop has been detected, this one included.
  severity judge(const finding& f, std::uint32_t& occurrence);
  // The rule looked at this loop and did not fire: its episode, if any, is over.
  void quiet(detector_id d, std::uint64_t identity);
  // Every episode of this rule is over (rules without a per-loop identity, e.g. cycles).
  void quiet_all(detector_id d);
  void reset() { loops_.clear(); }

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
  escalation_rule rule_;
  std::map<std::pair<detector_id, std::uint64_t>, loop_state> loops_;
};

severity count_severity(std::uint32_t count, const ladder& steps);

}  // namespace loopguard::sdk
