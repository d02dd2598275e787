#include "store/checkpoint_store.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

namespace loopguard::daemon {

namespace {

// Runs `put` over each element while `s` is ok.
template <class Rows, class Put>
void each(status& s, const Rows& rows, Put&& put) {
  for (const auto& r : rows) {
    if (!s.ok()) return;
    s = put(r);
  }
}

status write_step(checkpoint_store& store, const compaction_step& step, commit_outcome& out) {
  status s;
  switch (step.what) {
    case compaction_step::kind::none:
      break;
    case compaction_step::kind::flip: {
      const state_changes& ch = *step.changes;
      each(s, ch.cleared_swarms, [&](const std::string& r) { return store.clear_swarm(r); });
      each(s, ch.swarms, [&](const swarm_row& r) { return store.put_swarm(r); });
      each(s, ch.workers, [&](const worker_row& r) { return store.put_worker(r); });
      if (s.ok()) s = store.flip(step.generation, step.boundary);
      break;
    }
    case compaction_step::kind::trim: {
      const auto t = store.trim_log(step.trim_bytes);
      if (!t) return t.error();
      out.trimmed = *t;
      break;
    }
  }
  return s;
}

// A whole compaction's rows, staged as `next` in one transaction of the rows file, after
// everything staged before is folded (the current generation's rows are older than these; the
// others, of a compaction that never became current or of a failed attempt, are dropped).
status stage_whole(rows_store& rows, const state_changes& state, std::int64_t current,
                   std::int64_t next) {
  status s = rows.begin();
  if (!s.ok()) return s;
  const auto folded = rows.fold_staged(current, std::numeric_limits<std::size_t>::max());
  if (!folded) s = folded.error();
  each(s, state.cleared_swarms, [&](const std::string& r) { return rows.stage_clear(next, r); });
  each(s, state.fingerprints,
       [&](const fingerprint_row& r) { return rows.stage_fingerprint(next, r); });
  each(s, state.erased, [&](const fingerprint_ref& r) { return rows.stage_erase(next, r); });
  if (s.ok()) s = rows.commit();
  if (!s.ok()) rows.rollback();
  return s;
}

}  // namespace

status write_checkpoint(checkpoint_store& store, const checkpoint& c, const compaction_step& step,
                        commit_outcome* out) {
  assert(c.compact || c.state.empty());  // rows are written only by a compaction
  commit_outcome ignored;
  commit_outcome& o = out != nullptr ? *out : ignored;
  o = {};
  std::int64_t next = 0;
  status s;
  if (c.compact) {
    const auto current = store.generation();
    if (!current) return current.error();
    next = *current + 1;
    s = stage_whole(store.rows(), c.state, *current, next);
    if (!s.ok()) return s;
  }
  s = store.begin();
  if (!s.ok()) return s;
  if (c.compact) {
    // Every record is covered by the rows: the floor moves past them all and they are deleted.
    const auto end = store.log_end();
    s = end ? store.truncate_log() : end.error();
    each(s, c.state.cleared_swarms, [&](const std::string& r) { return store.clear_swarm(r); });
    each(s, c.state.swarms, [&](const swarm_row& r) { return store.put_swarm(r); });
    each(s, c.state.workers, [&](const worker_row& r) { return store.put_worker(r); });
    if (s.ok()) s = store.flip(next, *end);
  }
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
  each(s, c.sequences, [&](const sequence_row& r) { return store.put_sequence(r); });
  const auto& ret = c.retention;
  each(s, ret.dropped, [&](const worker_identity& r) { return store.erase_sequence(r); });
  each(s, ret.seen, [&](const seen_row& r) { return store.put_seen(r); });
  each(s, ret.expired, [&](const expired_row& r) { return store.put_expired(r); });
  each(s, ret.forgotten, [&](const worker_identity& r) { return store.erase_expired(r); });
  each(s, ret.swarms_dropped, [&](const std::string& r) { return store.erase_swarm_seen(r); });
  each(s, ret.swarms_seen, [&](const swarm_seen_row& r) { return store.put_swarm_seen(r); });
  if (s.ok()) s = write_step(store, step, o);
  if (s.ok()) s = store.commit();
  if (!s.ok()) {
    store.rollback();
    o = {};
  }
  return s;
}

result<std::size_t> write_rows_step(rows_store& rows, const rows_step& step) {
  status s = rows.begin();
  if (!s.ok()) return s;
  std::size_t folded = 0;
  if (step.what == rows_step::kind::fold) {
    const auto n = rows.fold_staged(step.generation, step.limit);
    if (n) {
      folded = *n;
    } else {
      s = n.error();
    }
  } else {
    each(s, step.cleared,
         [&](const std::string& r) { return rows.stage_clear(step.generation, r); });
    each(s, step.erased,
         [&](const fingerprint_ref* r) { return rows.stage_erase(step.generation, *r); });
    each(s, step.rows,
         [&](const fingerprint_row* r) { return rows.stage_fingerprint(step.generation, *r); });
  }
  if (s.ok()) s = rows.commit();
  if (!s.ok()) {
    rows.rollback();
    return s;
  }
  return folded;
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
