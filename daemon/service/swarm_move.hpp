// Moving one swarm's state between daemons' databases, offline (docs/scaling.md, "Moving a
// swarm"): export it from the old owner's file, import it into the new owner's, then remove it
// from the old one. Each step restores the whole file through the daemon's own path
// (swarm_service::restore_from, the log replayed under the daemon's rules), so what moves is
// exactly what the daemon would serve; import and removal then write one transaction that also
// folds the target's log into its rows (a compaction), so no log record written before the move
// is ever replayed over the moved rows.
//
// `service` must be new and built as the daemon builds it (its rules and options), with a wall
// clock of 0 (offline_clock) so that unknown activity times stay unknown instead of becoming
// "now"; `store` is the opened database (nobody else may hold it: a running daemon locks it).
#pragma once

#include <string_view>

#include "service/swarm_service.hpp"
#include "store/checkpoint_store.hpp"
#include "store/swarm_export.hpp"

namespace loopguard::daemon {

// The wall clock the offline steps give swarm_service: 0 (unknown).
inline double offline_clock() {
  return 0;
}

// The swarm's state, or an error naming the store when it has no such swarm or cannot be read.
result<swarm_export> export_swarm(checkpoint_store& store, swarm_service& service,
                                  std::string_view swarm, std::string_view db);

// Writes `e` into the store in one transaction. Refused, with nothing written, when the store
// already holds anything counted of the swarm (fingerprints, workers, spend, sequence numbers
// or expired incarnations); a swarm row with nothing counted is replaced.
status import_swarm(checkpoint_store& store, swarm_service& service, const swarm_export& e,
                    std::string_view db);

// Deletes every row of the swarm `e` holds (its rows, sequence numbers, expired incarnations and
// last activity) in one transaction, only when the store still holds exactly `e` (a daemon that
// served the swarm after the export would otherwise lose what it counted since).
status remove_swarm(checkpoint_store& store, swarm_service& service, const swarm_export& e,
                    std::string_view db);

// Whether a swarm's state holds anything counted (import_swarm refuses to replace it).
bool holds_counts(const swarm_export& e);

// The swarms the service holds (live and tombstones), by name.
std::vector<std::string> swarm_names(const swarm_service& service);

}  // namespace loopguard::daemon
