// Hand-offs between the workers of one swarm and the cycles they make (docs/protocol.md,
// "Hand-off loops"): a call that names a `peer` hands work to that worker; when the same
// hand-offs go around the same workers again and again (A→B, B→A, A→B, ... with the same
// hand-off fingerprints), nobody is making progress on the work being passed along.
//
// Pure: values in, values out. Ordered by the swarm clock (each hand-off's effective time),
// so the daemon and replay see the same sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/protocol.hpp"

namespace loopguard::daemon {

// The hand-off fingerprint: the call's structural fingerprint plus the peer it names.
std::uint64_t handoff_fingerprint(std::uint64_t structural, std::string_view peer);

struct handoff {
  double t = 0;                   // effective event time
  std::string from, peer;         // worker names
  std::uint64_t fingerprint = 0;  // handoff_fingerprint()
  std::string tool;
  protocol::cost spent;
  friend bool operator==(const handoff&, const handoff&) = default;
};

// A cycle: `period` distinct hand-offs that form a ring of workers (each hands to the next,
// the last back to the first), gone around `rounds` times in order (a partial round at its
// start counts in `calls`, not in `rounds`).
struct handoff_cycle {
  std::uint64_t key = 0;  // the cycle's identity, whatever hand-off it starts from
  std::uint32_t period = 0, rounds = 0, calls = 0;
  std::vector<std::string> workers;  // in hand-off order, from the oldest of the last round
  std::string tool;                  // of the newest hand-off
  protocol::cost spent;              // what the `calls` hand-offs cost
  double t = 0;                      // of the newest hand-off
};

class handoff_log {
 public:
  // Hand-offs kept per swarm: enough for max_period x max(warn_at, critical_at) (validated).
  static constexpr std::size_t kMaxKept = 256;

  // Inserts by time (after every hand-off of the same or an earlier time); drops the oldest
  // beyond kMaxKept.
  void add(handoff h);
  // How far back current_cycle() looks for the hand-off that closes a ring.
  static constexpr std::size_t kLookback = 16;
  // The newest ring of 2..max_period hand-offs that went around at least twice and is still
  // going on: closed by one of the last kLookback hand-offs, and no worker of the ring handed
  // anything else on after it (hand-offs among other workers are ignored). nullopt: none.
  std::optional<handoff_cycle> current_cycle(std::uint32_t max_period) const;

  const std::deque<handoff>& entries() const { return entries_; }
  void assign(std::vector<handoff> entries);  // a restore: entries in time order
  bool empty() const { return entries_.empty(); }

 private:
  std::deque<handoff> entries_;  // by time
};

}  // namespace loopguard::daemon
