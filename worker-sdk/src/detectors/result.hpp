// `result`, judged on a failed result: the same error from several calls in a row
// (docs/detectors.md).
#pragma once

#include <optional>
#include <string_view>

#include "../call_history.hpp"
#include "finding.hpp"
#include "loopguard/config.hpp"

namespace loopguard::sdk {

// "unknown tool X", "tool X not found", "tool X is not available" in any case: the agent
// called a tool that does not exist (result_rule::errors::unknown_tool).
bool names_unknown_tool(std::string_view text);

// What the rule says about a result. `counted_before`: a failure of the same turn was counted
// already (the parallel calls of one turn are one attempt), so this one adds nothing, and the
// caller reports nothing either way (no finding again, and the loop is not left).
struct result_check {
  std::optional<finding> found;
  bool counted_before = false;
};

result_check check_result(const call_history& history, const call_record& answered,
                          const result_rule& rule);

}  // namespace loopguard::sdk
