// Where a replay's global detections come from: the offline swarm state (swarm_replay), or a
// real loopguardd (daemon_replay, `replay --daemon`).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "loopguard/config.hpp"
#include "loopguard/status.hpp"
#include "loopguard/trace.hpp"
#include "replay_line.hpp"

namespace loopguard::cli {

class global_source {
 public:
  virtual ~global_source() = default;
  // Trace event `index` happens (its worker's local manager has judged it). An error stops
  // the replay of the file.
  virtual status on_event(std::size_t index) = 0;
  // After the last event: every global line, in event order; a lifted verdict is a line of
  // level none (replay_trace counts and removes them).
  virtual result<std::vector<replay_line>> finish() = 0;
};

// The recording's swarms judged offline (swarm_replay); `config` must have passed
// swarm_replay::validate(). `tr` must outlive the source.
std::unique_ptr<global_source> offline_globals(const manager_config& config, const trace& tr);

}  // namespace loopguard::cli
