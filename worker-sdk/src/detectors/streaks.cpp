#include "streaks.hpp"

#include <string>
#include <utility>

namespace loopguard::sdk {
namespace {

std::optional<finding> streak_finding(detector_id d, fixed_loop loop, const streak& s,
                                      const streak_rule& rule, std::string_view tool,
                                      std::string_view detail = {}) {
  if (!rule.enabled || s.length < rule.steps.warn_at) return std::nullopt;
  finding f;
  f.detector = d;
  f.identity = identity_of(loop);
  f.count = s.length;
  f.steps = rule.steps;
  f.loop_start = s.start;
  f.confidence = 0.8;
  f.tool = std::string(tool);
  f.detail = std::string(detail);
  return f;
}

}  // namespace

streak_step<streak> summary_turn(streak s, bool after_text, std::size_t event_index,
                                 const streak_rule& rule) {
  if (!after_text) s.clear();
  s.hit(event_index);
  auto found = streak_finding(detector_id::summary, fixed_loop::text_only_turns, s, rule, {});
  return {s, std::move(found)};
}

streak_step<streak> test_fix_result(streak s, bool failed, std::size_t event_index,
                                    const streak_rule& rule, std::string_view command) {
  if (!failed) {
    s.clear();
    return {s, std::nullopt, true};
  }
  s.hit(event_index);
  auto found =
      streak_finding(detector_id::test_fix, fixed_loop::failing_test_runs, s, rule, command);
  return {s, std::move(found)};
}

streak_step<shell_streak> bash_cascade_result(shell_streak s, bool failed, bool file_op,
                                              std::size_t event_index, const streak_rule& rule,
                                              std::string_view command) {
  if (!failed) {
    s.failures.clear();
    return {s, std::nullopt, true};
  }
  if (s.failures.length == 0) s.file_ops = 0;
  s.failures.hit(event_index);
  if (file_op) ++s.file_ops;
  const bool mostly_files = 2 * s.file_ops >= s.failures.length;
  auto found = streak_finding(detector_id::bash_cascade, fixed_loop::failing_shell_commands,
                              s.failures, rule, command, mostly_files ? "file_ops" : "");
  return {s, std::move(found)};
}

}  // namespace loopguard::sdk
