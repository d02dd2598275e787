// `summary`, `test_fix` and `bash_cascade`: runs of events of one kind (text-only turns, failing
// test runs, failing shell commands). Pure: each takes the streak so far and the event, and
// returns the streak after the event with what the rule says about it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "finding.hpp"

namespace loopguard::sdk {

// A run of events of one kind; any other event of interest ends it.
struct streak {
  std::uint32_t length = 0;
  std::size_t start = 0;  // event index of the first event of the run

  void hit(std::size_t event_index) {
    if (length++ == 0) start = event_index;
  }
  void clear() { length = 0; }
};

// test_fix's and bash_cascade's streak: failures in a row (a success ends it), the run of them
// that failed alike (each like the one before it), and for bash_cascade how many of the alike
// run were file operations.
struct failure_streak {
  streak alike;
  std::uint32_t failures = 0;  // in a row, alike or not
  std::size_t first = 0;       // event index of the first of them
  std::string last;            // failure_signature() of the last failure
  std::uint32_t file_ops = 0;
  bool changed = false;         // a change was made since the last failure (test_fix)
  std::uint64_t last_call = 0;  // the exact fingerprint of the last failure's call (0: unknown)
  std::size_t last_turn = 0;    // the turn of the last failure's call (0: unknown)

  void clear() {
    alike.clear();
    failures = 0;
    first = 0;
    last.clear();
    file_ops = 0;
    changed = false;
    last_call = 0;
    last_turn = 0;
  }
};

// One failing (or passing) outcome for a failure streak.
struct outcome {
  bool failed = false;
  std::string_view signature;  // failure_signature() of the output, when failed
  bool file_op = false;        // bash_cascade: the command read or wrote a file
  std::uint64_t call = 0;      // the exact fingerprint of its call (0: unknown)
  std::size_t turn = 0;        // the turn of its call (0: unknown, counts as a turn of its own)
};

// What a streak rule says about one event.
template <class State>
struct streak_step {
  State next;                    // the streak after the event
  std::optional<finding> found;  // the streak is long enough to report
  bool ended = false;            // the event ended the streak: the agent left the loop
};

// summary: a text turn. `after_text`: the event before it was a text turn too; otherwise the
// turn starts a new streak. A tool call ends the streak (the manager's part: it is not a text).
streak_step<streak> summary_turn(streak s, bool after_text, std::size_t event_index,
                                 const streak_rule& rule);

// test_fix: the result of a test run `command`; bash_cascade: the result of a shell command. A
// success ends the streak. A failure extends the alike run when it failed like the failure
// before it (rule.alike_threshold), else starts a new one; the ladder counts the alike run, and
// past rule.give_up_at failures in a row, alike or not, the failures themselves
// (docs/detectors.md, "Failing alike"). A later failure of the turn of the last failure (the
// parallel calls of one turn are one attempt) changes nothing and says nothing. For
// bash_cascade, `file_op` words the nudge.
streak_step<failure_streak> test_fix_result(failure_streak s, const outcome& o,
                                            std::size_t event_index, const failure_rule& rule,
                                            std::string_view command);
streak_step<failure_streak> bash_cascade_result(failure_streak s, const outcome& o,
                                                std::size_t event_index, const failure_rule& rule,
                                                std::string_view command);

}  // namespace loopguard::sdk
