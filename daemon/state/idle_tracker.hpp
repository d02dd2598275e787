// Retention (docs/operations.md, "Retention"): when each worker incarnation and each swarm was
// last active by the daemon's wall clock, which of them are connected, and which incarnations
// were expired. Pure: the wall clock comes in as a value (`now`, Unix seconds), so tests drive
// it. It only ever decides what to forget; detection never reads it (the swarm state runs on
// event time alone).
//
// Thread-safety: none; the daemon keeps it behind the swarm service's mutex.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "state/sequence_ledger.hpp"

namespace loopguard::daemon {

// Idle times in seconds; 0 turns that expiry off.
struct retention_limits {
  static constexpr double kIncarnationIdle = 7 * 86400.0;
  static constexpr double kSwarmIdle = 30 * 86400.0;
  static constexpr double kExpiredKept = 90 * 86400.0;
  double incarnation_idle = kIncarnationIdle;
  double swarm_idle = kSwarmIdle;
  // How long an expired incarnation is remembered (refused with incarnation_expired); after it
  // the record is dropped, and the incarnation would be taken for a new one.
  double expired_kept = kExpiredKept;
};

struct seen_row {
  worker_identity id;
  double seen = 0;
};
struct swarm_seen_row {
  std::string swarm;
  double seen = 0;
};
struct expired_row {
  worker_identity id;
  double expired = 0;  // when (wall clock)
};

// The tracker's changes since the last take_changes(), for the checkpoint. A store writes them
// in this order: dropped, seen, expired, forgotten, swarms_dropped, swarms_seen.
struct retention_changes {
  std::vector<worker_identity> dropped;     // expired incarnations: sequence row deleted
  std::vector<seen_row> seen;               // an incarnation's last activity (its sequence row)
  std::vector<expired_row> expired;         // expired incarnations remembered
  std::vector<worker_identity> forgotten;   // records older than expired_kept, deleted
  std::vector<std::string> swarms_dropped;  // swarm activity deleted (expired or gone)
  std::vector<swarm_seen_row> swarms_seen;  // a swarm's last activity
  bool empty() const {
    return dropped.empty() && seen.empty() && expired.empty() && forgotten.empty() &&
           swarms_dropped.empty() && swarms_seen.empty();
  }
  // Folds `newer` (taken later) into this failed set so both commit together: what `newer`
  // says about an identity overrides what this set says (written in the order above).
  void merge_newer(retention_changes&& newer);
};

// What a sweep found idle (and forgot): the caller expires them in the state and the ledger.
struct retention_sweep {
  std::vector<worker_identity> incarnations;
  std::vector<std::string> swarms;
  std::size_t forgotten = 0;  // expired-incarnation records dropped after expired_kept
};

// What retention holds now, for the gauges.
struct retention_gauges {
  std::size_t incarnations = 0;  // sequence rows
  std::size_t expired = 0;       // expired incarnations remembered
};

class idle_tracker {
 public:
  // While an incarnation or swarm stays active its last activity is written at most this
  // often (a restart may then see it up to this much older); a disconnect is always written.
  static constexpr double kSeenResolution = 60;

  bool is_expired(const worker_identity& id) const { return expired_.contains(id); }
  // A connection of `id` said hello. False, changing nothing, when `id` was expired.
  bool attach(const worker_identity& id, double now);
  // That connection closed (every attach() that returned true is matched by one detach()).
  void detach(const worker_identity& id, double now);
  // `id` sent events or a gap.
  void touch(const worker_identity& id, double now);

  // Forgets and returns every incarnation and swarm idle for its limit with no connection, and
  // drops expired records older than expired_kept. Cost: one pass over what is tracked.
  retention_sweep sweep(double now, const retention_limits& limits);
  // A swept incarnation that had a sequence row: refused from now on (until expired_kept).
  void record_expired(const worker_identity& id, double now);

  retention_changes take_changes();
  // Replaces everything. A seen of 0 (unknown: a migrated file) counts as `now`; `swarms` are
  // the live swarms of the restored state, each active at its stored time or else `now`.
  void restore(const std::vector<seen_row>& incarnations, const std::vector<swarm_seen_row>& seen,
               const std::vector<std::string>& swarms, const std::vector<expired_row>& expired,
               double now);

  std::size_t incarnations() const { return incarnations_.size(); }
  std::size_t swarms() const { return swarms_.size(); }
  std::size_t expired() const { return expired_.size(); }
  std::size_t connected() const;                    // incarnations with a connection now
  double seen(const worker_identity& id) const;     // 0: not tracked
  double swarm_seen(std::string_view swarm) const;  // 0: not tracked
  // The expired incarnations of `swarm` remembered, by identity.
  std::vector<expired_row> expired_of(std::string_view swarm) const;

 private:
  struct activity {
    double seen = 0;
    double written = -std::numeric_limits<double>::infinity();
    std::uint32_t connections = 0;
  };
  void active(activity& a, bool force, double now, bool& dirty) const;

  std::map<worker_identity, activity, std::less<>> incarnations_;
  std::map<std::string, activity, std::less<>> swarms_;
  std::map<worker_identity, double, std::less<>> expired_;
  std::set<worker_identity> dirty_;  // incarnations whose seen is to be written
  std::set<std::string, std::less<>> dirty_swarms_;
  retention_changes pending_;  // dropped, expired, forgotten, swarms_dropped
};

}  // namespace loopguard::daemon
