// The presets (docs/presets.md says where each number comes from).
#include "loopguard/presets.hpp"

#include <array>
#include <functional>

namespace loopguard {
namespace {

// Everything off: the compatibility presets switch on only what the system they copy has.
manager_config all_off(const char* name) {
  manager_config c;
  c.preset = name;
  c.exact.enabled = false;
  c.structural.enabled = false;
  c.cycle.enabled = false;
  c.similar_args.enabled = false;
  c.result.enabled = false;
  c.output_similarity.enabled = false;
  c.content.enabled = false;
  c.summary.enabled = false;
  c.intent.enabled = false;
  c.test_fix.enabled = false;
  c.bash_cascade.enabled = false;
  c.retrace.enabled = false;
  c.limit.enabled = false;
  c.escalation.outcome_aware = false;
  c.escalation.terminate_after = 0;
  return c;
}

manager_config balanced() {
  return manager_config{};
}

manager_config conservative() {
  manager_config c = balanced();
  c.preset = "conservative";
  c.exact.steps = {5, 10};
  c.structural.steps = {6, 12};
  c.cycle.steps = {4, 6};
  c.similar_args.steps = {5, 10};
  c.similar_args.threshold = 90;
  c.result.steps = {4, 8};
  c.output_similarity.threshold = 95;
  c.content.occurrences = 15;
  c.similar_args.result_threshold = 85;
  c.result.alike_threshold = 85;
  c.summary.steps = {5, 8};
  c.test_fix = {true, {5, 8}, 85, 14};
  c.bash_cascade = {true, {5, 8}, 85, 14};
  c.retrace.steps = {5, 8};
  c.escalation.terminate_after = 4;
  return c;
}

manager_config aggressive() {
  manager_config c = balanced();
  c.preset = "aggressive";
  c.exact.steps = {2, 4};
  c.structural.steps = {3, 5};
  c.cycle.steps = {2, 3};
  c.similar_args.steps = {3, 5};
  c.similar_args.threshold = 80;
  c.result.steps = {2, 4};
  c.output_similarity.threshold = 85;
  c.content.occurrences = 6;
  c.similar_args.result_threshold = 75;
  c.result.alike_threshold = 75;
  c.summary.steps = {2, 3};
  c.test_fix = {true, {2, 4}, 75, 7};
  c.bash_cascade = {true, {2, 4}, 75, 7};
  c.retrace.steps = {2, 4};
  c.escalation.terminate_after = 2;
  return c;
}

// ralph-orchestrator SafetyGuard: the last 5 outputs, rapidfuzz fuzz.ratio >= 90 stops the run
// on the first similar output (which is not recorded); 100 iterations, 4 h, cost 50 (the CLI's
// default), 5 consecutive failures.
manager_config ralph() {
  manager_config c = all_off("ralph");
  c.output_similarity = {true, {1, 0}, 90, 5, /*record_similar=*/false};
  c.limit = {true, 100, 14400, 50, 5, /*warn_fraction=*/1};
  c.escalation.terminate_after = 1;
  return c;
}

// aaagent-rs LoopDetector defaults: 3 earlier identical calls among the last 10 (the 4th
// fires); cycles of 2..3 calls, two copies plus the start of a third; every detection counts,
// warn, warn, terminate.
manager_config aaagent() {
  manager_config c = all_off("aaagent");
  c.exact = {true, {4, 0}, count_mode::window, 11, 0, false};
  c.cycle = {true, {3, 0}, 2, 3, /*count_started=*/true};
  c.escalation.terminate_after = 3;
  c.escalation.every_firing_counts = true;
  return c;
}

// attocode LoopDetector + PhaseTracker + shared_economics_state: exact 3 and fuzzy 4 in a row,
// prompts at 3 / 4 / 6, never a local stop; test-fix 3, bash cascade 3, text-only turns 2;
// swarm: 10 calls of one fingerprint from any workers, lifetime, whatever the results.
manager_config attocode() {
  manager_config c = all_off("attocode");
  c.exact = {true, {3, 6}, count_mode::consecutive, 10, 0, false};
  c.structural = {true, {4, 6}, count_mode::consecutive, 10, 0, false};
  c.test_fix = {true, {3, 0}};
  c.bash_cascade = {true, {3, 0}};
  c.summary = {true, {2, 0}};
  c.limit = {true, 100, 900, 1.0, 0, 0.8};
  c.escalation.reject_at_critical = false;
  // attocode counts for the whole run; our window is at most 30 days.
  c.swarm = {{"threshold", 10},
             {"min_workers", 1},
             {"window_seconds", 2592000},
             {"progress_aware", false}};
  return c;
}

// gemini-cli LoopDetectionService: the 5th identical call in a row, or the last 2..5 calls
// repeated five times over; content chunks of 50 characters seen 10 times close together;
// strike 1 nudges, strike 2 ends the turn.
manager_config gemini_cli() {
  manager_config c = all_off("gemini-cli");
  c.exact = {true, {5, 0}, count_mode::consecutive, 1000, 0, false};
  c.cycle = {true, {5, 0}, 2, 5, /*count_started=*/false};
  c.content = {true, {1, 0}, 50, 10, 250, 5000};
  c.escalation.terminate_after = 2;
  c.escalation.every_firing_counts = true;
  return c;
}

// OpenHands StuckDetector (V0, headless): 4 identical action/observation pairs, the same action
// failing 3 times whatever the errors say, 3 agent messages in a row, A-B-A-B-A-B with matching
// observations; user messages do not count (headless); stuck means stop.
manager_config openhands() {
  manager_config c = all_off("openhands");
  c.exact = {true, {4, 0}, count_mode::consecutive, 1000, 0, false};
  c.similar_args = {true,
                    {3, 0},
                    /*threshold=*/100,
                    1000,
                    /*result_threshold=*/0,
                    /*identical_errors=*/true};
  c.cycle = {true, {3, 0}, 2, 2, false};
  c.summary = {true, {3, 0}};
  c.escalation.outcome_aware = true;
  c.escalation.terminate_after = 1;
  c.escalation.user_message_restarts = false;
  return c;
}

// OpenHands software-agent-sdk StuckDetector: the same thresholds; upstream scans the last 20
// events, approximated by a window of 20 calls for the exact rule; any 3 agent messages in a
// row (content not compared); the same action failing: one nudge at the 3rd time, stuck at the
// 4th (#4332); stuck ends the conversation; only events after the last user message count.
manager_config openhands_sdk() {
  manager_config c = openhands();
  c.preset = "openhands-sdk";
  c.exact.window = 20;
  c.exact.steps = {4, 0, /*terminate_at=*/4};
  c.cycle.steps = {3, 0, 3};
  c.summary = {true, {3, 0, 3}};
  c.similar_args.steps = {3, 0, 4};
  c.escalation.terminate_after = 0;  // each rule's own terminate_at stops the run
  c.escalation.user_message_restarts = true;
  return c;
}

// cline: the same tool with the same parameters (task_progress ignored) warns at 3 in a row and
// escalates at 5; 3 consecutive mistakes stop a headless task; a reply that keeps announcing
// instead of doing ("let me" 12 / 24 times, the same line 8 / 16 times, a one-word line 20 / 40
// times) is soft / hard. Calls are never refused.
manager_config cline() {
  manager_config c = all_off("cline");
  c.exact = {true, {3, 5}, count_mode::consecutive, 1000, 0, false};
  c.intent.enabled = true;  // intent_rule's numbers are cline's text-loop defaults
  c.escalation.reject_at_critical = false;
  c.escalation.repeat_nudges = false;  // one warning at 3, one escalation at 5
  c.limit = {true, 0, 0, 0, 3, 1};
  return c;
}

// Roo-Code ToolRepetitionDetector: at most 3 identical calls in a row; the 4th is refused and
// the count starts again.
manager_config roo_code() {
  manager_config c = all_off("roo-code");
  c.exact = {true, {4, 4}, count_mode::consecutive, 1000, 0, /*reset_after_fire=*/true};
  c.escalation.reject_at_critical = true;
  return c;
}

// goose RepetitionInspector as the agent builds it (no repetition limit): only the repeated
// error rule, the same error from the same tool 3 times in a row.
manager_config goose() {
  manager_config c = all_off("goose");
  c.result = {true, {3, 3}, 1000, /*min_distinct_calls=*/1, /*same_tool=*/true};
  return c;
}

// openclaw tool-loop-detection with enabled: true: the same call 10 times among the last 30
// warns (the 11th), 20 with the same outcome blocks; a polling tool counts only polls without
// progress; ping-pong of two calls warns at 10 alternating calls, blocks at 20 when neither
// side's outcome moves; 10 "unknown tool" failures of one tool block it.
manager_config openclaw() {
  manager_config c = all_off("openclaw");
  c.exact = {true,
             {11, 21},
             count_mode::window,
             31,
             0,
             false,
             /*critical_needs_same_result=*/true};
  c.cycle = {true, {5, 10}, 2, 2, /*count_started=*/false, /*critical_needs_same_result=*/true};
  c.result = {true,
              {10, 10},
              30,
              /*min_distinct_calls=*/1,
              /*same_tool=*/true,
              100,
              result_rule::errors::unknown_tool};
  for (const char* poll_tool : {"command_status", "process"}) c.tools[poll_tool].poll = true;
  // openclaw compares an exec result without its runtime details.
  c.fingerprint.result_volatile_keys = {"pid", "durationMs", "cwd"};
  c.escalation.reject_at_critical = true;
  return c;
}

struct entry {
  std::string_view name;
  manager_config (*make)();
};

constexpr std::array<entry, 13> kPresets{{
    {"balanced", balanced},
    {"conservative", conservative},
    {"aggressive", aggressive},
    {"ralph", ralph},
    {"aaagent", aaagent},
    {"attocode", attocode},
    {"gemini-cli", gemini_cli},
    {"openhands", openhands},
    {"openhands-sdk", openhands_sdk},
    {"cline", cline},
    {"roo-code", roo_code},
    {"goose", goose},
    {"openclaw", openclaw},
}};

}  // namespace

std::optional<manager_config> preset(std::string_view name) {
  for (const auto& e : kPresets) {
    if (e.name == name) return e.make();
  }
  return std::nullopt;
}

std::vector<std::string_view> preset_names() {
  std::vector<std::string_view> out;
  for (const auto& e : kPresets) out.push_back(e.name);
  return out;
}

}  // namespace loopguard
