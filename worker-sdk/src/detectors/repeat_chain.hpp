// `exact`, `structural` and `similar_args`: how many times the current call repeats an earlier
// one with nothing changed in between (docs/detectors.md, "Repeat chains").
#pragma once

#include <functional>
#include <optional>

#include "../call_history.hpp"
#include "finding.hpp"
#include "loopguard/config.hpp"

namespace loopguard::sdk {

struct chain {
  std::uint32_t count = 1;     // the current call included
  std::size_t loop_start = 0;  // event index of the oldest call counted
  bool results_known = true;   // every counted earlier call had a result
};

// Walks back from the newest call. `is_occurrence` says whether a call repeats the current one.
// The chain stops at a call that brought progress, at an occurrence whose result differs from
// the most recent occurrence's (when `outcome_aware`), and, in consecutive mode, at the first
// call that is not an occurrence.
chain count_chain(const call_history& history, const call_record& current, std::uint32_t window,
                  bool consecutive, bool outcome_aware,
                  const std::function<bool(const call_record&)>& is_occurrence);

// The current call and its earlier exact repeats within `window` calls that returned what the
// most recent of them returned (other calls between them are skipped, as openclaw's
// no-progress streak does); repeats without a result yet are skipped too.
std::uint32_t same_result_streak(const call_history& history, const call_record& current,
                                 std::uint32_t window);

// `poll`: the tool is a polling tool (tool_override::poll).
std::optional<finding> check_exact(const call_history& history, const call_record& current,
                                   const repeat_rule& rule, const ladder& steps, bool outcome_aware,
                                   std::uint32_t total_calls, bool poll = false);

std::optional<finding> check_structural(const call_history& history, const call_record& current,
                                        const repeat_rule& rule, const ladder& steps,
                                        bool outcome_aware);

std::optional<finding> check_similar_args(const call_history& history, const call_record& current,
                                          const similar_args_rule& rule, const ladder& steps,
                                          bool outcome_aware);

}  // namespace loopguard::sdk
