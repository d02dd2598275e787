// The URL a worker connects to (docs/protocol.md, "Connecting"): the path /ws, and an optional
// query naming the worker's swarm, `/ws?swarm=S`, so that a proxy can route a swarm to one
// daemon without reading frames. Pure: a request target in, what it names out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "loopguard/status.hpp"

namespace loopguard::daemon {

inline constexpr std::string_view kWorkerPath = "/ws";

// RFC 3986 percent-decoding: %XX (two hex digits) is the byte XX; every other byte stands for
// itself ('+' too). An error names the offset of a malformed escape.
result<std::string> percent_decode(std::string_view s);

// Whether the target's path (before any '?') is the worker path.
bool is_worker_path(std::string_view target);

// The swarm the target's query names (`swarm=S`, percent-decoded; other parameters are
// ignored), nullopt when it names none. An error (an HTTP 400) when the value is malformed,
// empty, longer than protocol::kMaxNameBytes, not an identifier (valid UTF-8 without U+FFFD),
// or given twice.
result<std::optional<std::string>> url_swarm(std::string_view target);

}  // namespace loopguard::daemon
