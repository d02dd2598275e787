#include "streaks.hpp"

#include <algorithm>

#include <string>
#include <utility>

#include "failure_signature.hpp"

namespace loopguard::sdk {
namespace {

std::optional<finding> streak_finding(detector_id d, fixed_loop loop, const streak& s, bool enabled,
                                      const ladder& steps, std::string_view tool,
                                      std::string_view detail = {}) {
  if (!enabled || s.length < steps.warn_at) return std::nullopt;
  finding f;
  f.detector = d;
  f.identity = identity_of(loop);
  f.count = s.length;
  f.steps = steps;
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
  auto found = streak_finding(detector_id::summary, fixed_loop::text_only_turns, s, rule.enabled,
                              rule.steps, {});
  return {s, std::move(found)};
}

namespace {

// The parallel calls of one turn are one attempt, and the turn's first failure stands for it: a
// later failure of the same turn neither extends the streak nor breaks it (docs/detectors.md,
// "Parallel calls of one turn").
bool later_in_turn(const failure_streak& s, const outcome& o) {
  return s.failures > 0 && o.turn != 0 && o.turn == s.last_turn;
}

// The failure streak after the failure `o`.
// `rerun_counts`: the same call failing again with no change since it failed before continues
// the alike run whatever it says (a rerun of the tests without a change cannot be progress). A
// different test command after a failure (another file, another runner) is not a rerun: it
// continues the run only when it failed alike. So is a result whose call is unknown (unpaired).
failure_streak advance(failure_streak s, const outcome& o, std::size_t event_index,
                       const failure_rule& rule, bool rerun_counts) {
  const bool rerun = rerun_counts && !s.changed && o.call != 0 && o.call == s.last_call;
  const bool alike =
      s.failures > 0 && (rerun || failed_alike(s.last, o.signature, rule.alike_threshold));
  s.changed = false;
  s.last_call = o.call;
  s.last_turn = o.turn;
  if (!alike) {
    s.alike.clear();
    s.file_ops = 0;
  }
  if (s.failures++ == 0) s.first = event_index;
  s.alike.hit(event_index);
  if (o.file_op) ++s.file_ops;
  s.last.assign(o.signature);
  return s;
}

// The finding of a failure streak: the alike run on the rule's ladder, else every failure in a
// row once there are give_up_at of them.
std::optional<finding> failure_finding(detector_id d, fixed_loop loop, const failure_streak& s,
                                       const failure_rule& rule, std::string_view tool,
                                       std::string_view detail) {
  if (auto f = streak_finding(d, loop, s.alike, rule.enabled, rule.steps, tool, detail)) return f;
  if (rule.give_up_at == 0 || s.failures < rule.give_up_at) return std::nullopt;
  streak all;
  all.length = s.failures;
  all.start = s.first;
  // The same distance from warn to critical as the rule's own ladder.
  const std::uint32_t rise =
      rule.steps.critical_at == 0
          ? 0
          : rule.steps.critical_at - std::min(rule.steps.critical_at, rule.steps.warn_at);
  const ladder steps{rule.give_up_at, rule.steps.critical_at == 0 ? 0 : rule.give_up_at + rise};
  return streak_finding(d, loop, all, rule.enabled, steps, tool, "varied");
}

}  // namespace

streak_step<failure_streak> test_fix_result(failure_streak s, const outcome& o,
                                            std::size_t event_index, const failure_rule& rule,
                                            std::string_view command) {
  if (!o.failed) {
    s.clear();
    return {s, std::nullopt, true};
  }
  if (later_in_turn(s, o)) return {std::move(s), std::nullopt};
  s = advance(std::move(s), o, event_index, rule, true);
  auto found =
      failure_finding(detector_id::test_fix, fixed_loop::failing_test_runs, s, rule, command, {});
  return {std::move(s), std::move(found)};
}

streak_step<failure_streak> bash_cascade_result(failure_streak s, const outcome& o,
                                                std::size_t event_index, const failure_rule& rule,
                                                std::string_view command) {
  if (!o.failed) {
    s.clear();
    return {s, std::nullopt, true};
  }
  if (later_in_turn(s, o)) return {std::move(s), std::nullopt};
  s = advance(std::move(s), o, event_index, rule, false);
  const bool mostly_files = 2 * s.file_ops >= s.alike.length;
  auto found = failure_finding(detector_id::bash_cascade, fixed_loop::failing_shell_commands, s,
                               rule, command, mostly_files ? "file_ops" : "");
  return {std::move(s), std::move(found)};
}

}  // namespace loopguard::sdk
