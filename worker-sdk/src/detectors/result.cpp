#include "result.hpp"

#include "failure_signature.hpp"
#include "loopguard/ascii.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace loopguard::sdk {

bool names_unknown_tool(std::string_view text) {
  const std::string lower = ascii::lowercase(text.substr(0, 1024));
  if (lower.find("unknown tool") != std::string::npos) return true;
  const std::string_view l(lower);
  for (std::size_t at = l.find("tool "); at != std::string_view::npos;
       at = l.find("tool ", at + 5)) {
    const std::size_t name_end = l.find_first_of(" \t\n", at + 5);
    if (name_end == std::string_view::npos) break;
    const std::string_view rest = l.substr(name_end + 1);
    if (rest.starts_with("not found") || rest.starts_with("is not available")) return true;
  }
  return false;
}

result_check check_result(const call_history& history, const call_record& answered,
                          const result_rule& rule) {
  if (answered.ok) return {};
  const bool unknown_only = rule.count_errors == result_rule::errors::unknown_tool;
  if (unknown_only && !names_unknown_tool(answered.failure)) return {};
  const std::size_t look = history.calls_in_turns(rule.window);
  std::uint32_t count = 0;       // attempts: the parallel calls of one turn are one attempt
  std::size_t counted_turn = 0;  // none yet (turns start at 1)
  bool counted_before = false;
  std::size_t start = answered.event_index;
  std::set<std::uint64_t> calls;
  for (std::size_t i = 0; i < look; ++i) {
    const call_record& r = history.newest(i);
    if (!r.answered) continue;
    if (rule.same_tool && r.tool != answered.tool) continue;
    if (r.ok) break;  // the error streak ends at a success
    const bool same = r.result == answered.result ||
                      (rule.alike_threshold < 100 && !r.ok && !answered.ok &&
                       failed_alike(r.failure, answered.failure, rule.alike_threshold));
    if (!same || (unknown_only && !names_unknown_tool(r.failure))) continue;
    // A turn's calls are adjacent in the history, so one comparison finds its others.
    if (r.turn != counted_turn) ++count;
    counted_turn = r.turn;
    if (r.turn == answered.turn && &r != &answered) counted_before = true;
    start = std::min(start, r.event_index);
    calls.insert(r.fp.exact);
  }
  if (counted_before) return {std::nullopt, true};
  if (count < rule.steps.warn_at || calls.size() < rule.min_distinct_calls) return {};
  finding f;
  f.detector = detector_id::result;
  f.identity = answered.result;
  f.count = count;
  f.steps = rule.steps;
  f.loop_start = start;
  f.confidence = calls.size() >= count ? 0.9 : 0.8;
  f.tool = answered.tool;
  return {std::move(f)};
}

}  // namespace loopguard::sdk
