// The swarm-wide doom-loop rule: when a fingerprint is a global dead end (docs/protocol.md,
// "Global doom loop"). Values only; a preset or the `"swarm"` object of a config carries one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/json_fields.hpp"
#include "loopguard/status.hpp"

namespace loopguard::daemon {

// One swarm's budget (docs/configuration.md, "swarm.budget"): what its reported costs are
// measured in, and the caps its workers share. The swarm's spend reaching warn_fraction of a cap
// warns every worker; reaching the cap is critical (every call rejected); terminate_at times the
// cap, terminate. The token and the amount cap are judged each on its own; the further wins.
struct budget_cap {
  static constexpr std::size_t kMaxUnitBytes = 16;
  std::string unit;          // of the amounts events report ("USD"); empty: none said
  std::uint64_t tokens = 0;  // 0: no token cap
  double amount = 0;         // 0: no amount cap
  double warn_fraction = 0.8;
  double terminate_at = 1.5;  // times the cap; 0: never terminate
  bool capped() const { return tokens > 0 || amount > 0; }
  friend bool operator==(const budget_cap&, const budget_cap&) = default;
};

struct budget_rules {
  static constexpr std::size_t kMaxPrefixes = 256;
  budget_cap base;
  // Overrides by swarm-id prefix (keys not given keep the base's); the longest match wins.
  std::vector<std::pair<std::string, budget_cap>> prefixes;
  const budget_cap& of(std::string_view swarm) const;
  friend bool operator==(const budget_rules&, const budget_rules&) = default;
};

// When hand-offs between workers are a loop (docs/configuration.md, "swarm.handoff"): the same
// hand-offs around the same workers `warn_at` times warn the workers of the cycle, `critical_at`
// times is critical.
struct handoff_rules {
  std::uint32_t warn_at = 3;      // rounds of the same cycle
  std::uint32_t critical_at = 5;  // 0: never
  std::uint32_t max_period = 4;   // the most hand-offs in one round looked for, 2..8
  friend bool operator==(const handoff_rules&, const handoff_rules&) = default;
};

struct swarm_rules {
  static constexpr std::uint32_t kMaxWindowCallsLimit = 100000;  // max_window_calls at most

  std::uint32_t threshold = 10;     // counted calls in the window that declare `warn`
  std::uint32_t min_workers = 2;    // distinct workers needed; 1 = one worker alone suffices
  double window_seconds = 1800;     // calls older than this (event time) stop counting
  bool progress_aware = true;       // false: every call counts whatever its result
  std::uint32_t absolute_cap = 50;  // all calls in the window, progress or not: `warn`
  std::uint32_t critical_at = 20;   // counted calls that declare `critical`; 0 = never
  std::size_t max_fingerprints_per_swarm = 200000;  // beyond it the coldest are evicted
  // The most calls of one fingerprint the sliding window remembers (the oldest leave first).
  // Every call-count limit above is at most this, so the window never forgets a call a rule
  // could still need.
  std::uint32_t max_window_calls = 1024;
  budget_rules budget;
  handoff_rules handoff;
};

// Success when `rules` is consistent, else an error naming the key and its allowed range
// (`swarm.critical_at: expected 0 (never) or an integer in 11..1024, got 5`).
status validate(const swarm_rules& rules);

// Reads the fields of a `"swarm"` object into `out` (keys not given keep their value), each in
// its own range; the ranges that depend on other keys are validate()'s. Errors go to the reader.
void read_swarm_rules(json_fields::object swarm, swarm_rules& out);

// The `"swarm"` object of a config or preset over `base`: keys not given keep base's value; an
// unknown key, a mistyped value or one out of range is an error naming the key
// (`swarm.threshold: expected an integer in 1..1024, got 0`). The result passed validate().
result<swarm_rules> parse_swarm_rules(const nlohmann::json& j, swarm_rules base = {});

nlohmann::json to_json(const swarm_rules& rules);

}  // namespace loopguard::daemon
