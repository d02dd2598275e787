// One detection as a line of `loopguard replay`'s output (docs/trace-format.md, "Output"): the
// one definition, used by replay and by the SDK's recorder (trace_recorder.hpp), so that the
// lines a recorded run was given and the lines its replay prints can be compared byte for byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "loopguard/verdict.hpp"

namespace loopguard {

// {"trace":...,"event":...,"worker":...,"swarm":...,"detector":...,"severity":...,"count":...,
//  "message":...,"confidence":...,"loop_start":...} without its closing brace, so that a caller
// may add fields (`replay --deliveries`). Strings are repaired to valid UTF-8; confidence is
// written with two decimals.
std::string open_detection_line(std::string_view trace, std::size_t event, std::string_view worker,
                                std::string_view swarm, const detection& d);
// The whole line, newline-terminated.
std::string detection_line(std::string_view trace, std::size_t event, std::string_view worker,
                           std::string_view swarm, const detection& d);

}  // namespace loopguard
