// What the manager says about one event: allow it, nudge the agent, reject the call, or stop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/severity.hpp"

namespace loopguard {

// Detector ids as replay prints them (docs/detectors.md).
enum class detector_id {
  exact,
  structural,
  cycle,
  similar_args,
  result,
  output_similarity,
  content,
  summary,
  test_fix,
  bash_cascade,
  intent,   // one reply announcing instead of doing (docs/detectors.md, "[intent]")
  retrace,  // results already seen through other calls (docs/detectors.md, "[retrace]")
  limit,
  judge,    // the caller's judge hook (docs/sdk.md, "Judge hook")
  budget,   // the swarm's budget, as loopguardd judged it (docs/protocol.md, "Swarm budget")
  handoff,  // a hand-off loop between workers, from loopguardd (docs/protocol.md)
  global,   // keep last: kDetectorCount counts up to it
};
// The number of detectors; verdict.cpp checks at compile time that its names table has as many.
inline constexpr std::size_t kDetectorCount = static_cast<std::size_t>(detector_id::global) + 1;

std::string_view to_string(detector_id d);
// Whether the detector is the swarm's (loopguardd's): global, budget, handoff.
constexpr bool is_swarm_detector(detector_id d) {
  return d == detector_id::global || d == detector_id::budget || d == detector_id::handoff;
}
// The detector with this id (docs/detectors.md), or nullopt.
std::optional<detector_id> parse_detector(std::string_view name);

// One rule firing on one event. Several may fire on the same event.
struct detection {
  detector_id detector = detector_id::exact;
  loopguard::severity level = severity::warn;
  std::uint32_t count = 0;       // repetitions the rule counted (calls, cycles, turns, ...)
  double confidence = 1.0;       // 0..1: how sure the rule is that this is no progress
  std::size_t loop_start = 0;    // event index where the repeated behaviour began
  std::uint32_t occurrence = 1;  // how many times this same loop has been detected (episodes)
  std::string tool;              // the tool involved, when there is one
  std::string message;           // the nudge text to show the agent
  std::string suggestion;        // one line: what to try instead
};

enum class action {
  allow,      // nothing to say
  nudge,      // inject `message` (as a user/system message, or prepended to the tool result)
  reject,     // the call must not run; give the agent `message` instead of a result
  terminate,  // stop the run with status LOOP_DETECTED
};

std::string_view to_string(action a);

struct verdict {
  loopguard::action action = action::allow;
  loopguard::severity level = severity::none;
  std::size_t event_index = 0;        // the manager's index of the event judged
  std::vector<detection> detections;  // every rule that fired; [strongest] first
  // Observe mode (manager_config::mode) only: the action enforce mode would have returned
  // (allow included); `action` is then always allow. Absent in enforce mode.
  std::optional<loopguard::action> would_have;

  bool allowed() const { return action == action::allow; }
  // The strongest detection (the one the verdict follows); only when detections is not empty.
  const detection& strongest() const { return detections.front(); }
};

// The status a caller should end a terminated run with.
inline constexpr std::string_view kLoopDetectedStatus = "LOOP_DETECTED";

}  // namespace loopguard
