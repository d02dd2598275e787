#include "service/group_committer.hpp"

#include <algorithm>
#include <chrono>
#include <span>

namespace loopguard::daemon {

group_committer::group_committer(swarm_service& service, checkpoint_store& store,
                                 std::size_t compact_log_bytes, std::size_t chunk_rows)
    : service_(service),
      store_(store),
      compact_log_bytes_(compact_log_bytes),
      chunk_rows_(std::max<std::size_t>(chunk_rows, 1)) {}

compaction_step group_committer::next_step() {
  compaction_step step;
  switch (phase_) {
    case phase::idle:
      break;
    case phase::fold:
      step.what = compaction_step::kind::fold;
      step.limit = chunk_rows_;
      break;
    case phase::stage: {
      if (cursor_ >= staged_total()) {
        phase_ = phase::flip;
        return next_step();
      }
      step.what = compaction_step::kind::stage;
      step.generation = generation_;
      const std::span<const fingerprint_ref> erased(rows_.erased);
      const std::span<const fingerprint_row> rows(rows_.fingerprints);
      std::size_t at = cursor_, left = chunk_rows_;
      if (at < erased.size()) {
        const std::size_t n = std::min(left, erased.size() - at);
        step.erased = erased.subspan(at, n);
        at += n;
        left -= n;
      }
      if (left > 0 && at >= erased.size()) {
        const std::size_t from = at - erased.size();
        step.rows = rows.subspan(from, std::min(left, rows.size() - from));
      }
      break;
    }
    case phase::flip:
      // The boundary is known once the commit that took the change set has committed (a
      // failed one is retried first, merged with the later ones).
      if (!boundary_) break;
      step.what = compaction_step::kind::flip;
      step.generation = generation_;
      step.changes = &rows_;
      step.boundary = *boundary_;
      break;
  }
  return step;
}

void group_committer::advance(const compaction_step& step, const commit_outcome& out, outcome& o) {
  switch (step.what) {
    case compaction_step::kind::none:
      break;
    case compaction_step::kind::fold:
      if (out.folded < step.limit) phase_ = phase::idle;
      break;
    case compaction_step::kind::stage:
      cursor_ += step.erased.size() + step.rows.size();
      o.rows += step.erased.size() + step.rows.size();
      break;
    case compaction_step::kind::flip:
      o.rows += rows_.swarms.size() + rows_.workers.size() + rows_.cleared_swarms.size();
      o.compacted = true;
      o.compaction_commits = commits_;
      rows_ = {};
      cursor_ = 0;
      boundary_.reset();
      phase_ = phase::fold;
      break;
  }
}

group_committer::outcome group_committer::commit_once(bool final) {
  outcome o;
  checkpoint c;
  if (final) {
    // One whole compaction, so that a clean restart loads rows and replays nothing. A staged
    // compaction not yet current is folded into it: its rows were taken first.
    c = service_.take_checkpoint(true);
    if (phase_ == phase::stage || phase_ == phase::flip) {
      rows_.merge_newer(std::move(c.state));
      c.state = std::move(rows_);
    }
    rows_ = {};
    cursor_ = 0;
    boundary_.reset();
  } else if (phase_ == phase::idle && !has_failed_ && service_.log_bytes() >= compact_log_bytes_) {
    const result<std::int64_t> current = store_.generation();
    if (current.has_value()) {
      const auto t0 = std::chrono::steady_clock::now();
      staged_take t = service_.take_staged_checkpoint();
      o.take_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      o.began_rows = t.rows.fingerprints.size() + t.rows.erased.size();
      commits_ = 0;
      c = std::move(t.commit);
      rows_ = std::move(t.rows);
      cursor_ = 0;
      boundary_.reset();
      generation_ = current.value() + 1;
      phase_ = phase::stage;
    } else {
      c = service_.take_checkpoint(false);  // tried again at the next commit
    }
  } else {
    c = service_.take_checkpoint(false);
  }
  if (has_failed_) {
    failed_.merge_newer(std::move(c));
    c = std::move(failed_);
    failed_ = {};
    has_failed_ = false;
  }
  o.epoch = c.epoch;
  const compaction_step step = final ? compaction_step{} : next_step();
  if (c.empty() && step.what == compaction_step::kind::none) return o;
  commit_outcome out;
  o.wrote = true;
  o.result = write_checkpoint(store_, c, step, &out);
  if (!o.result.ok()) {
    failed_ = std::move(c);
    has_failed_ = true;
    return o;
  }
  if (out.boundary) boundary_ = out.boundary;
  o.rows = c.state.fingerprints.size() + c.log.size() + c.sequences.size();
  if (final) {
    o.compacted = true;
    phase_ = phase::idle;  // the whole compaction folded every staged row
  } else {
    ++commits_;
    advance(step, out, o);
  }
  service_.mark_durable(c);
  return o;
}

}  // namespace loopguard::daemon
