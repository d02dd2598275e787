// Feeds one recorded event (docs/trace-format.md) to a manager: the one mapping from trace
// event kinds to the manager's methods, used by `loopguard replay`, the fuzzers and the tests.
#pragma once

#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/trace.hpp"

namespace loopguard {

verdict feed(ExecutionEconomicsManager& m, const trace_event& ev);

}  // namespace loopguard
