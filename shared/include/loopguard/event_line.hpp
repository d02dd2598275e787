// One recorded event as a line of the trace format (docs/trace-format.md): the inverse of
// parse_trace_line for events. Pure.
#pragma once

#include <string>

#include "loopguard/trace.hpp"

namespace loopguard {

// `{"kind":...,"worker":...,"swarm":...,"t":...,<the kind's fields>}` without a newline: `t` only
// when set (shortest form that reads back as the same double; not finite: left out), `id` only
// when not empty, `ok` only on a result, `content` of a user event only when not empty. Strings
// are written with the canonical JSON escaping and repaired to valid UTF-8; `args` in canonical
// JSON (canonical_json.hpp), which fingerprints as the object itself. parse_trace_line of the
// line gives back the event (its args in canonical form; `line` aside).
std::string event_line(const trace_event& ev);

}  // namespace loopguard
