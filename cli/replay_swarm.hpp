// Offline swarm rules for replay: the recording's workers share one shared_economics_state per
// run, exactly as loopguardd would judge them, so a multi-worker recording gives its global
// detections without a daemon.
#pragma once

#include <memory>
#include <vector>

#include "loopguard/config.hpp"
#include "loopguard/status.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::cli {

class swarm_replay {
 public:
  // `config` must have passed validate().
  swarm_replay(const manager_config& config, const trace& tr);
  ~swarm_replay();

  // What trace event `index` caused in the swarm state. A call is judged with its result, at
  // the result's event; a call whose result is not in the recording is judged when it is made.
  struct step {
    // Global detections (warn, critical): replay's output lines, detector global.
    std::vector<detection> detections;
    // Verdicts lifted at this event (level none: their counted calls fell below their level),
    // as global detections of level none, in the order the daemon sends them: before this
    // event's detections. Not replay's output lines (their severities are warn, critical,
    // terminate); replay counts them, and `replay --daemon` receives the same from the daemon.
    std::vector<detection> lifted;
  };
  step on_event(std::size_t index);

  // Checks the configuration's "swarm" object.
  static status validate(const manager_config& config);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard::cli
