// `summary`, `test_fix` and `bash_cascade`: runs of events of one kind (text-only turns, failing
// test runs, failing shell commands). Pure: each takes the streak so far and the event, and
// returns the streak after the event with what the rule says about it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// bash_cascade's streak: failing shell commands, and how many of them were file operations.
struct shell_streak {
  streak failures;
  std::uint32_t file_ops = 0;
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

// test_fix: the result of a test run `command`; a failure extends the streak, a pass ends it.
streak_step<streak> test_fix_result(streak s, bool failed, std::size_t event_index,
                                    const streak_rule& rule, std::string_view command);

// bash_cascade: the result of a shell command; a failure extends the streak, a success ends it.
// `file_op`: the command reads or writes a file (the nudge then points to the file tools).
streak_step<shell_streak> bash_cascade_result(shell_streak s, bool failed, bool file_op,
                                              std::size_t event_index, const streak_rule& rule,
                                              std::string_view command);

}  // namespace loopguard::sdk
