// The swarm-wide doom-loop rule: when a fingerprint is a global dead end (docs/protocol.md,
// "Global doom loop"). Values only; a preset or the `"swarm"` object of a config carries one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace loopguard::daemon {

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
};

// Nullopt when `rules` is consistent, else a message naming the key and its allowed range.
std::optional<std::string> validate(const swarm_rules& rules);

// Reads the `"swarm"` object of a config or preset into `out`. Keys not given keep the value
// `out` already has; an unknown key, a mistyped value or one out of range is an error naming
// the key (e.g. "swarm.threshold: must be an integer in 1..1024, got 0"). `out` is unchanged
// when an error is returned.
std::optional<std::string> parse_swarm_rules(const nlohmann::json& j, swarm_rules& out);

nlohmann::json to_json(const swarm_rules& rules);

}  // namespace loopguard::daemon
