#include "store/checkpoint_store.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

namespace loopguard::daemon {

namespace {

status write_step(checkpoint_store& store, const compaction_step& step, commit_outcome& out) {
  status s;
  const auto each = [&](const auto& rows, auto&& put) {
    for (const auto& r : rows) {
      if (!s.ok()) return;
      s = put(r);
    }
  };
  switch (step.what) {
    case compaction_step::kind::none:
      break;
    case compaction_step::kind::stage:
      each(step.erased,
           [&](const fingerprint_ref* r) { return store.stage_erase(step.generation, *r); });
      each(step.rows,
           [&](const fingerprint_row* r) { return store.stage_fingerprint(step.generation, *r); });
      break;
    case compaction_step::kind::flip: {
      const state_changes& ch = *step.changes;
      each(ch.cleared_swarms, [&](const std::string& r) { return store.clear_swarm(r); });
      each(ch.swarms, [&](const swarm_row& r) { return store.put_swarm(r); });
      each(ch.workers, [&](const worker_row& r) { return store.put_worker(r); });
      if (s.ok()) s = store.flip(step.generation, step.boundary);
      break;
    }
    case compaction_step::kind::fold: {
      if (step.trim_bytes > 0) {  // 0: the committer knows no covered record is left
        const auto t = store.trim_log(step.trim_bytes);
        if (!t) return t.error();
        out.trimmed = *t;
      }
      const auto n = store.fold_staged(step.limit);
      if (!n) return n.error();
      out.folded = *n;
      break;
    }
  }
  return s;
}

}  // namespace

status write_checkpoint(checkpoint_store& store, const checkpoint& c, const compaction_step& step,
                        commit_outcome* out) {
  assert(c.compact || c.state.empty());  // rows are written only by a compaction
  commit_outcome ignored;
  commit_outcome& o = out != nullptr ? *out : ignored;
  o = {};
  status s = store.begin();
  if (!s.ok()) return s;
  const auto each = [&](const auto& rows, auto&& put) {
    for (const auto& r : rows) {
      if (!s.ok()) return;
      s = put(r);
    }
  };
  if (c.compact) {
    // Staged rows of a compaction in chunks: the current generation's are older than these
    // rows (fold them first), the others never became current.
    const auto folded = store.fold_staged(std::numeric_limits<std::size_t>::max());
    s = folded ? store.truncate_log() : folded.error();
  }
  each(c.state.cleared_swarms, [&](const std::string& r) { return store.clear_swarm(r); });
  each(c.state.swarms, [&](const swarm_row& r) { return store.put_swarm(r); });
  each(c.state.workers, [&](const worker_row& r) { return store.put_worker(r); });
  each(c.state.fingerprints, [&](const fingerprint_row& r) { return store.put_fingerprint(r); });
  each(c.state.erased, [&](const fingerprint_ref& r) { return store.erase_fingerprint(r); });
  for (std::size_t i = 0; i <= c.log.size() && s.ok(); ++i) {
    if (c.log_mark && *c.log_mark == i) {
      const auto end = store.log_end();
      if (!end) {
        s = end.error();
        break;
      }
      o.boundary = *end;
    }
    if (i < c.log.size()) s = store.append_log(c.log[i]);
  }
  each(c.sequences, [&](const sequence_row& r) { return store.put_sequence(r); });
  const auto& ret = c.retention;
  each(ret.dropped, [&](const worker_identity& r) { return store.erase_sequence(r); });
  each(ret.seen, [&](const seen_row& r) { return store.put_seen(r); });
  each(ret.expired, [&](const expired_row& r) { return store.put_expired(r); });
  each(ret.forgotten, [&](const worker_identity& r) { return store.erase_expired(r); });
  each(ret.swarms_dropped, [&](const std::string& r) { return store.erase_swarm_seen(r); });
  each(ret.swarms_seen, [&](const swarm_seen_row& r) { return store.put_swarm_seen(r); });
  if (s.ok()) s = write_step(store, step, o);
  if (s.ok()) s = store.commit();
  if (!s.ok()) {
    store.rollback();
    o = {};
  }
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
    log_mark.reset();  // a whole compaction truncates the log: no boundary is needed
  } else {
    if (newer.log_mark) log_mark = log.size() + *newer.log_mark;
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
