// Settings of an ExecutionEconomicsManager: one JSON document, validated with errors that name
// the key and the allowed range (docs/configuration.md). Every detector can be switched off;
// call-repeat rules can be overridden per tool.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/fingerprint.hpp"
#include "loopguard/status.hpp"

namespace loopguard {

// The count ladder of one rule: below warn_at nothing, from warn_at a warning, from critical_at
// critical (repeat calls are then rejected). 0 for critical_at means "never critical".
struct ladder {
  std::uint32_t warn_at = 3;
  std::uint32_t critical_at = 6;
  std::uint32_t terminate_at = 0;  // this count ends the run whatever the episode count; 0 = never
};

enum class count_mode { consecutive, window, both };

struct repeat_rule {  // exact, structural
  bool enabled = true;
  ladder steps;
  count_mode mode = count_mode::both;
  std::uint32_t window = 10;       // calls looked at, the current one included
  std::uint32_t absolute_cap = 0;  // calls of one fingerprint, whatever the results; 0 = off
  bool reset_after_fire = false;   // a firing call starts the count afresh (roo-code)
  // exact only: critical also needs the repeats to have returned the same result, as many times
  // as critical_at asks (openclaw's no-progress streak); otherwise the level stays at warn.
  bool critical_needs_same_result = false;
};

struct cycle_rule {
  bool enabled = true;
  ladder steps{3, 5};            // repetitions of the whole cycle
  std::uint32_t min_length = 2;  // calls in one cycle
  std::uint32_t max_length = 5;
  bool count_started = false;  // a started repetition counts as one (aaagent) or only full ones
  // critical also needs every call of the cycle to have returned what it returned the time
  // before (openclaw's ping-pong "no progress" evidence); otherwise the level stays at warn.
  bool critical_needs_same_result = false;
};

struct similar_args_rule {
  bool enabled = true;
  ladder steps{3, 6};
  double threshold = 85;  // ratio() of the canonical argument JSON, 0..100
  std::uint32_t window = 10;
  // Failures alike: ratio() of the failure signatures, 0..100 (docs/detectors.md, "Failing
  // alike"); 100 = only identical failures (after masking) count.
  double result_threshold = 80;
  // The same call failing again with an error counts too, whatever the error says (OpenHands'
  // action-error rule); otherwise identical repeats are exact's and at least two different
  // argument sets must be among the counted calls.
  bool identical_errors = false;
};

struct result_rule {
  bool enabled = true;
  ladder steps{3, 6};         // attempts (turns: docs/detectors.md) that ended in the same error
  std::uint32_t window = 10;  // turns looked at
  std::uint32_t min_distinct_calls = 2;  // different calls among them (1: repeats count too)
  bool same_tool = false;                // only errors of the same tool count (goose)
  // Errors alike: ratio() of the failure signatures, 0..100; 100 = only the same result
  // fingerprint counts (docs/detectors.md, "Failing alike").
  double alike_threshold = 100;
  // Which errors count: any, or only "unknown tool" errors (the agent calling a tool that does
  // not exist, as openclaw's unknown_tool_repeat).
  enum class errors { any, unknown_tool } count_errors = errors::any;
};

struct output_similarity_rule {
  bool enabled = true;
  ladder steps{1, 3};          // similar outputs in a row
  double threshold = 90;       // ratio(), 0..100, inclusive
  std::uint32_t history = 5;   // earlier outputs compared against
  bool record_similar = true;  // keep a similar output in the history (ralph does not)
};

struct content_rule {
  bool enabled = true;
  ladder steps{1, 2};                // loops found in one stream
  std::uint32_t chunk_size = 50;     // bytes
  std::uint32_t occurrences = 10;    // of one chunk
  std::uint32_t max_distance = 250;  // average distance between them, in bytes
  std::uint32_t max_history = 5000;  // bytes of the stream kept
};

// intent (docs/detectors.md, "[intent]"): one reply that keeps announcing instead of doing.
// Off in Loopguard's own presets; the cline preset turns it on with these numbers.
struct intent_rule {
  bool enabled = false;
  ladder steps{8, 16};          // the reply's last line and its near copies right before it
  ladder phrase_steps{12, 24};  // `phrase` anywhere in the reply
  ladder token_steps{20, 40};   // a one-word last line and its copies right before it
  std::string phrase = "let me";
  std::uint32_t min_bytes = 200;  // shorter replies are not looked at
  // Repeated lines and the phrase reach critical only in a reply at least this long.
  std::uint32_t critical_min_bytes = 1500;
};

struct streak_rule {  // summary
  bool enabled = true;
  ladder steps{3, 5};
};

// retrace: results that show again what other calls showed before, with no progress since.
struct retrace_rule {
  bool enabled = true;
  ladder steps{3, 5};             // retraced results among the last `window` looked at
  std::uint32_t window = 10;      // results looked at (successful, productive, min_bytes)
  std::uint32_t min_bytes = 200;  // shorter outputs ("ok", "[]") coincide without meaning it
};

struct failure_rule {  // test_fix, bash_cascade
  bool enabled = true;
  ladder steps{3, 5};            // failures in a row that failed alike
  double alike_threshold = 0;    // ratio() of failure signatures; 0 = every failure is alike
  std::uint32_t give_up_at = 0;  // failures in a row, alike or not, that fire anyway; 0 = off
};

struct limit_rule {
  bool enabled = true;
  std::uint64_t max_iterations = 1000;  // model turns; 0 = no limit
  double max_wall_seconds = 0;          // since the first event; 0 = no limit
  double max_cost = 0;  // amounts of add_cost() and of results (on_tool_result); 0 = no limit
  std::uint32_t max_consecutive_failures = 20;  // failed tool results in a row; 0 = no limit
  double warn_fraction = 0.8;                   // warn once at this fraction of a limit; 1 = never
};

// When the judge hook (set_judge) is asked, and what its answer must reach (docs/sdk.md, "Judge
// hook"). Without a judge set nothing is asked.
struct judge_rule {
  bool enabled = true;
  std::uint64_t after_turn = 30;    // first question at this model turn (Gemini CLI: 30)
  std::uint32_t every_turns = 5;    // then every this many turns; 0 = only on_warn
  bool on_warn = true;              // also ask when another rule fires (once per turn)
  double threshold = 0.9;           // probability at or above which the answer is a detection
  ladder steps{1, 2};               // answers above the threshold in a row
  std::uint32_t max_events = 20;    // recent events in the digest
  std::uint32_t max_bytes = 8000;   // their tool names and texts together
  std::uint32_t event_bytes = 400;  // one event's text, cut at a character boundary
};

struct escalation_rule {
  std::uint32_t terminate_after = 3;  // the Nth detection of the same loop terminates; 0 = never
  bool reject_at_critical = true;     // a critical repeat call is rejected, not run
  bool outcome_aware = true;          // results decide what counts as a repeat
  bool every_firing_counts = false;   // each firing is a new detection, not each episode
  bool repeat_nudges = true;          // false: within an episode, speak only when the level rises
  // A user message restarts the repetition counts (docs/detectors.md, "User messages and
  // resumes"); false: user messages are ignored (OpenHands V0 in headless mode).
  bool user_message_restarts = true;
};

// Per-tool overrides of the call-repeat rules; unset fields keep the global value.
struct tool_override {
  std::optional<bool> enabled;
  std::optional<ladder> exact, structural, similar_args;
  // A polling tool: an exact repeat counts only while it returns the same result, at every
  // level (openclaw's known_poll_no_progress); output that changes is progress.
  std::optional<bool> poll;
};

// What the verdicts do (docs/configuration.md, "mode"). observe (shadow mode): every verdict
// the manager returns is allow, carrying in `would_have` the action enforce would have taken,
// so a preset can be sized on live traffic before it is enforced.
enum class guard_mode { enforce, observe };

// A default-constructed manager_config is the balanced preset.
struct manager_config {
  std::string preset = "balanced";
  guard_mode mode = guard_mode::enforce;  // not part of any preset
  fingerprint_options fingerprint;
  repeat_rule exact{true, {3, 6}, count_mode::both, 10, 30, false};
  repeat_rule structural{true, {4, 7}, count_mode::both, 10, 0, false};
  cycle_rule cycle;
  similar_args_rule similar_args{true, {4, 7}, 85, 10, 80};
  result_rule result{true, {3, 6}, 10, 2, false, 80};
  output_similarity_rule output_similarity;
  content_rule content;
  streak_rule summary{true, {3, 5}};
  intent_rule intent;
  failure_rule test_fix{true, {3, 5}, 80, 10};
  failure_rule bash_cascade{true, {3, 5}, 80, 10};
  retrace_rule retrace;
  limit_rule limit;
  judge_rule judge;
  escalation_rule escalation;
  std::map<std::string, tool_override, std::less<>> tools;
  nlohmann::json swarm = nlohmann::json::object();  // the swarm rule, read by the daemon side
};

// Builds a configuration from JSON: `{"preset": NAME, ...overrides}`, read with json_fields.hpp
// (10.0 is an integer). Unknown keys, wrong types and out-of-range values are errors naming the
// key path, e.g. `detectors.exact.warn_at: expected an integer in 1..1000000, got 0`.
result<manager_config> parse_config(const nlohmann::json& doc);

// The configuration as JSON (every key): parse_config(to_json(c)) gives back c.
nlohmann::json to_json(const manager_config& config);

}  // namespace loopguard
