// One recording through Loopguard: every worker gets its own manager (local detections),
// the global detections come from a global_source (offline, or a daemon).
#pragma once

#include <cstddef>
#include <vector>

#include "global_source.hpp"
#include "loopguard/config.hpp"
#include "loopguard/trace.hpp"
#include "replay_line.hpp"

namespace loopguard::cli {

struct file_result {
  std::vector<replay_line> lines;  // in event order; at one event local lines come first
  bool terminated = false;         // a run would have been terminated
  std::size_t events = 0;
  std::size_t lifted = 0;  // global verdicts lifted (level none): counted, never output lines
};

// An error comes only from `globals` (a daemon that stopped answering).
result<file_result> replay_trace(const trace& tr, const manager_config& config,
                                 global_source& globals);

}  // namespace loopguard::cli
