// loopguardd's configuration: the --config JSON file (docs/operations.md, "Config file").
#pragma once

#include <chrono>
#include <string>

#include "loopguard/status.hpp"
#include "server/server_context.hpp"
#include "state/swarm_rules.hpp"

namespace loopguard::daemon {

struct daemon_config {
  static constexpr std::chrono::milliseconds kCheckpointInterval{50};
  swarm_rules rules;
  server_limits limits;
  std::chrono::milliseconds checkpoint_interval = kCheckpointInterval;
};

// Reads `path` over `base` (keys not given keep base's values), with json_fields.hpp's rules.
// An error names the file and the key (`FILE: limits.max_frame: expected an integer in ...`).
result<daemon_config> load_config(const std::string& path, daemon_config base = {});

// Reads a token file: its first line, surrounding whitespace removed; an error if unreadable or
// empty.
result<std::string> load_token(const std::string& path);

}  // namespace loopguard::daemon
