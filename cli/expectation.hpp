// A recording's label (the meta line's `expect`, docs/trace-format.md) against what replay
// found: the one judgement `replay --expect` and `loopguard eval` share.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "loopguard/trace.hpp"
#include "replay_trace.hpp"

namespace loopguard::cli {

// The index in r.lines of the first line the label counts: warn or above, of the label's
// detector when it names one. nullopt: none.
std::optional<std::size_t> first_counted(const trace_expect& x, const file_result& r);

// Empty when the recording's label holds, else why not ("expected a detection at or before
// event 15, first at event 20"). A recording without a label does not hold.
std::string check_expectation(const trace& tr, const file_result& r);

}  // namespace loopguard::cli
