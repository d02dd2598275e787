// `cycle`: the last calls form a sequence of 2 or more distinct calls that repeats (A->B->A->B)
// with nothing changed (docs/detectors.md).
#pragma once

#include <optional>

#include "../call_history.hpp"
#include "finding.hpp"
#include "loopguard/config.hpp"

namespace loopguard::sdk {

std::optional<finding> check_cycle(const call_history& history, const call_record& current,
                                   const cycle_rule& rule, bool outcome_aware);

}  // namespace loopguard::sdk
