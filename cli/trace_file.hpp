// Reading a trace file for a subcommand: errors come back as "FILE:LINE: message".
#pragma once

#include <string>

#include "loopguard/trace.hpp"

namespace loopguard::cli {

// Exit statuses shared by the subcommands.
inline constexpr int kExitBadInput = 2;

// Reads and parses `path`; a failure's message names the file and line (`FILE:3: ...`).
result<trace> load_trace(const std::string& path);

}  // namespace loopguard::cli
