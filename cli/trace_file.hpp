// Reading a trace file for a subcommand: errors come back as "FILE:LINE: message".
#pragma once

#include <optional>
#include <string>

#include "loopguard/trace.hpp"

namespace loopguard::cli {

// Exit statuses shared by the subcommands.
inline constexpr int kExitBadInput = 2;

// Reads and parses `path`; on failure returns the message to print (file and line named).
std::optional<std::string> load_trace(const std::string& path, trace& out);

}  // namespace loopguard::cli
