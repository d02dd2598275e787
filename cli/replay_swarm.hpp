// Offline swarm rules for replay: every swarm of a recording shares one swarm state, as the
// daemon would run it. (Filled in with the daemon's SharedEconomicsState.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loopguard/config.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::cli {

class swarm_replay {
 public:
  explicit swarm_replay(const manager_config& config);
  ~swarm_replay();

  // Global detections caused by trace event `index` (a judged call).
  std::vector<detection> on_event(const trace& tr, std::size_t index, call_pairing& pairing);

  static std::optional<std::string> validate(const manager_config& config);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard::cli
