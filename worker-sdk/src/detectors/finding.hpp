// What a detector reports before escalation turns it into a detection with a severity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "loopguard/config.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::sdk {

// The identity of a loop that no fingerprint tells apart: each of these rules watches one loop
// per run (`limit`: one per limit). The other rules use a fingerprint as the identity (the exact
// or structural call, the error's result, the cycle's rotation). Escalation keys episodes by
// detector and identity, so a value only has to differ from the others of its own rule.
enum class fixed_loop : std::uint64_t {
  similar_replies = 1,           // output_similarity: replies resembling recent ones
  repeating_text = 2,            // content: a passage repeating inside the text stream
  text_only_turns = 107,         // summary: replies without a tool call
  failing_test_runs = 108,       // test_fix: failing test runs
  failing_shell_commands = 109,  // bash_cascade: failing shell commands
  announced_intent = 110,        // intent: a reply announcing instead of doing
  retraced_results = 111,        // retrace: results already seen through other calls
  iterations = 200,              // limit: max_iterations
  wall_time = 201,               // limit: max_wall_seconds
  cost = 202,                    // limit: max_cost
  consecutive_failures = 203,    // limit: max_consecutive_failures
  judged_stuck = 300,            // judge: the caller's judge says the agent is stuck
};

constexpr std::uint64_t identity_of(fixed_loop loop) {
  return static_cast<std::uint64_t>(loop);
}

struct finding {
  detector_id detector = detector_id::exact;
  std::uint64_t identity = 0;  // which loop: the same identity across events is the same loop
  std::uint32_t count = 0;     // what the ladder compares
  ladder steps;                // the ladder to compare it with
  double confidence = 1.0;
  std::size_t loop_start = 0;  // event index
  std::string tool;
  std::string detail;         // what the nudge should mention (a pattern, a path, an error)
  bool rejectable = false;    // a repeat call: at critical it can be rejected
  bool results_known = true;  // every counted call's outcome was known and compared
  bool hard_stop = false;     // a limit reached: terminate now
  double cost = 0;            // judge: what the check cost (the caller's unit)
};

}  // namespace loopguard::sdk
