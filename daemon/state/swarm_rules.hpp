// The swarm-wide doom-loop rule: when a fingerprint is a global dead end (docs/protocol.md,
// "Global doom loop"). Values only; a preset or the `"swarm"` object of a config carries one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "loopguard/json_fields.hpp"
#include "loopguard/status.hpp"

namespace loopguard::daemon {

// What the swarm's reported costs are measured in (docs/configuration.md, "swarm.budget").
struct budget_rules {
  static constexpr std::size_t kMaxUnitBytes = 16;
  std::string unit;  // the unit of the amounts events report ("USD"); empty: none said
  friend bool operator==(const budget_rules&, const budget_rules&) = default;
};

struct swarm_rules {
  // The most calls of one fingerprint the sliding window remembers. Every call-count limit
  // below is at most this, so the window never forgets a call a rule could still need.
  static constexpr std::uint32_t kMaxWindowCalls = 1024;

  std::uint32_t threshold = 10;     // counted calls in the window that declare `warn`
  std::uint32_t min_workers = 2;    // distinct workers needed; 1 = one worker alone suffices
  double window_seconds = 1800;     // calls older than this (event time) stop counting
  bool progress_aware = true;       // false: every call counts whatever its result
  std::uint32_t absolute_cap = 50;  // all calls in the window, progress or not: `warn`
  std::uint32_t critical_at = 20;   // counted calls that declare `critical`; 0 = never
  std::size_t max_fingerprints_per_swarm = 200000;  // beyond it the coldest are evicted
  budget_rules budget;
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
