// The words a global verdict puts in front of every worker of a swarm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "loopguard/protocol.hpp"
#include "loopguard/severity.hpp"
#include "state/handoff_cycles.hpp"
#include "state/swarm_rules.hpp"

namespace loopguard::daemon {

struct nudge_facts {
  std::string_view tool;
  std::string_view kind;  // "exact" | "structural"
  std::uint32_t calls = 0;
  std::uint32_t workers = 0;
  double window_seconds = 0;
  bool by_cap = false;    // declared by the absolute cap: its results kept changing
  protocol::cost wasted;  // what its counted calls cost; empty: nothing reported
  std::string_view unit;  // of wasted.amount; empty: none
};

// "212k tokens, $3.18" (USD is written with $; another unit follows the amount; no unit: the
// number alone); the part not reported is left out; empty when nothing was.
std::string cost_words(const protocol::cost& c, std::string_view unit);

// The text of a budget verdict at `level` (warn, critical, terminate): how much of its budget
// the swarm used and what to do.
std::string budget_nudge(severity level, const protocol::cost& spent, const budget_cap& cap);

// The text of a hand-off loop verdict: the cycle's workers, how often it went around, what its
// hand-offs cost; level none: the cycle was broken.
std::string handoff_nudge(severity level, const handoff_cycle& cycle, std::string_view unit);

// Level none: the text of a lifted verdict (the dead end looks cleared; `calls` are the counted
// calls left in the window).
std::string global_nudge(severity level, const nudge_facts& facts);

}  // namespace loopguard::daemon
