// The judge hook (docs/sdk.md, "Judge hook"): a callback the caller plugs into the manager that
// looks at a compact, bounded digest of the recent history and says how likely the agent is
// stuck, as Gemini CLI asks a model. Loopguard makes no network or model call of its own: the
// callback is the caller's (a model call, a heuristic, a script in tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loopguard {

// One recent event as the judge sees it; strings are valid UTF-8, cut at character boundaries.
struct judge_event {
  std::size_t index = 0;  // the manager's event index
  std::string kind;       // "tool_call", "tool_result", "text", "user", "resume"
  std::string tool;       // calls and results
  std::string text;       // a call's argument summary, a result's output, a reply's text (cut)
  bool ok = true;         // results
};

struct judge_digest {
  std::uint64_t turn = 0;            // model turns so far
  std::string why;                   // "cadence" (every_turns) or "warn" (a rule fired)
  std::vector<std::string> warning;  // the rules that fired on this event (detector ids)
  std::vector<judge_event> events;   // the most recent events, oldest first, bounded
};

struct judge_answer {
  double probability = 0;  // 0..1 that the agent is stuck
  std::string reason;      // why, in a sentence: shown to the agent in the nudge
  double cost = 0;         // what this check cost (tokens, money: the caller's unit)
};

// nullopt: no answer (the check was skipped or failed); counted, nothing is detected.
using judge_fn = std::function<std::optional<judge_answer>(const judge_digest&)>;

}  // namespace loopguard
