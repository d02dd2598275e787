// `result`, judged on a failed result: the same error from several calls in a row
// (docs/detectors.md).
#pragma once

#include <optional>

#include "../call_history.hpp"
#include "finding.hpp"
#include "loopguard/config.hpp"

namespace loopguard::sdk {

std::optional<finding> check_result(const call_history& history, const call_record& answered,
                                    const result_rule& rule);

}  // namespace loopguard::sdk
