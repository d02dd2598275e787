// loopguardd's configuration: the --config JSON file (docs/operations.md, "Config file").
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "server/server_context.hpp"
#include "state/swarm_rules.hpp"

namespace loopguard::daemon {

struct daemon_config {
  static constexpr std::chrono::milliseconds kCheckpointInterval{50};
  swarm_rules rules;
  server_limits limits;
  std::chrono::milliseconds checkpoint_interval = kCheckpointInterval;
};

// Reads `path` into `out` (keys not given keep their values). An error names the file and key.
std::optional<std::string> load_config(const std::string& path, daemon_config& out);

// Reads a token file: its first line, surrounding whitespace removed; an error if unreadable or
// empty.
std::optional<std::string> load_token(const std::string& path, std::string& out);

}  // namespace loopguard::daemon
