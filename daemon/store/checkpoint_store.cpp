#include "store/checkpoint_store.hpp"

#include <algorithm>
#include <cassert>

namespace loopguard::daemon {

status write_checkpoint(checkpoint_store& store, const checkpoint& c) {
  assert(c.compact || c.state.empty());  // rows are written only by a compaction
  status s = store.begin();
  if (!s.ok()) return s;
  const auto each = [&](const auto& rows, auto&& put) {
    for (const auto& r : rows) {
      if (!s.ok()) return;
      s = put(r);
    }
  };
  if (c.compact) s = store.truncate_log();
  each(c.state.cleared_swarms, [&](const std::string& r) { return store.clear_swarm(r); });
  each(c.state.swarms, [&](const swarm_row& r) { return store.put_swarm(r); });
  each(c.state.workers, [&](const worker_row& r) { return store.put_worker(r); });
  each(c.state.fingerprints, [&](const fingerprint_row& r) { return store.put_fingerprint(r); });
  each(c.state.erased, [&](const fingerprint_ref& r) { return store.erase_fingerprint(r); });
  each(c.log, [&](const std::string& r) { return store.append_log(r); });
  each(c.sequences, [&](const sequence_row& r) { return store.put_sequence(r); });
  const auto& ret = c.retention;
  each(ret.dropped, [&](const worker_identity& r) { return store.erase_sequence(r); });
  each(ret.seen, [&](const seen_row& r) { return store.put_seen(r); });
  each(ret.expired, [&](const expired_row& r) { return store.put_expired(r); });
  each(ret.forgotten, [&](const worker_identity& r) { return store.erase_expired(r); });
  each(ret.swarms_dropped, [&](const std::string& r) { return store.erase_swarm_seen(r); });
  each(ret.swarms_seen, [&](const swarm_seen_row& r) { return store.put_swarm_seen(r); });
  if (s.ok()) s = store.commit();
  if (!s.ok()) store.rollback();
  return s;
}

void checkpoint::merge_newer(checkpoint&& newer) {
  epoch = newer.epoch;
  if (newer.compact) {
    // Its rows cover every operation up to it, this log's included; a failed compaction's rows
    // still count (they are the changes since the last committed compaction).
    if (compact) {
      state.merge_newer(std::move(newer.state));
    } else {
      state = std::move(newer.state);
    }
    compact = true;
    log = std::move(newer.log);
  } else {
    for (auto& r : newer.log) log.push_back(std::move(r));
  }
  // A row the newer set writes again must not be deleted by this set's drop (drops are written
  // after the sequences).
  std::erase_if(retention.dropped, [&](const worker_identity& id) {
    return std::any_of(newer.sequences.begin(), newer.sequences.end(),
                       [&](const sequence_row& r) { return r.id == id; });
  });
  for (auto& s : newer.sequences) sequences.push_back(std::move(s));
  retention.merge_newer(std::move(newer.retention));
}

}  // namespace loopguard::daemon
