#include "service/group_committer.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <unordered_set>

namespace loopguard::daemon {
namespace {

std::size_t rows_in(const state_changes& p) {
  return p.erased.size() + p.fingerprints.size();
}

// The parts as one change set (for a whole compaction): the latest row of each fingerprint.
state_changes flatten(std::vector<state_changes>& parts) {
  state_changes out;
  std::unordered_set<std::string> seen;  // swarm + '\0' + kind + value
  const auto id = [](const std::string& s, const fingerprint_key& k) {
    return s + '\0' + static_cast<char>(k.kind) + std::to_string(k.value);
  };
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    for (auto& r : part->fingerprints) {
      if (seen.insert(id(r.swarm, r.key)).second) out.fingerprints.push_back(std::move(r));
    }
    for (auto& r : part->erased) {
      if (seen.insert(id(r.swarm, r.key)).second) out.erased.push_back(std::move(r));
    }
  }
  for (auto& part : parts) {
    for (auto& x : part.cleared_swarms) out.cleared_swarms.push_back(std::move(x));
    for (auto& x : part.swarms) out.swarms.push_back(std::move(x));
    for (auto& x : part.workers) out.workers.push_back(std::move(x));
  }
  return out;
}

}  // namespace

group_committer::group_committer(swarm_service& service, checkpoint_store& store, sizes chosen,
                                 rows_worker* worker)
    : service_(service),
      store_(store),
      own_worker_(worker == nullptr ? std::make_unique<inline_rows_worker>() : nullptr),
      worker_(worker == nullptr ? *own_worker_ : *worker),
      sizes_{chosen.compact_log_bytes, std::max<std::size_t>(chosen.take_rows, 1),
             std::max<std::size_t>(chosen.max_parts, 1),
             std::max<std::size_t>(chosen.job_rows, 1)} {}

void group_committer::reset_job() {
  parts_.clear();
  flip_rows_ = {};
  order_ = {};
  batch_ = {};
  cleared_staged_ = false;
  parts_done_ = false;
  rows_taken_ = 0;
  boundary_.reset();
}

void group_committer::prepare_parts() {
  // A completion taken in part j removed every row of its swarm from the state before it:
  // the rows of that swarm in parts before j are stale (the flip deletes the stored ones).
  for (std::size_t j = 1; j < parts_.size(); ++j) {
    for (const auto& name : parts_[j].cleared_swarms) {
      const auto of = [&](const auto& row) { return row.swarm == name; };
      for (std::size_t i = 0; i < j; ++i) {
        std::erase_if(parts_[i].fingerprints, of);
        std::erase_if(parts_[i].erased, of);
        std::erase_if(parts_[i].swarms, of);
        std::erase_if(parts_[i].workers, of);
      }
    }
  }
  for (auto& part : parts_) {
    for (auto& x : part.cleared_swarms) flip_rows_.cleared_swarms.push_back(std::move(x));
    for (auto& x : part.swarms) flip_rows_.swarms.push_back(std::move(x));
    for (auto& x : part.workers) flip_rows_.workers.push_back(std::move(x));
    part.cleared_swarms.clear();
    part.swarms.clear();
    part.workers.clear();
  }
}

bool group_committer::main_step_pending() const {
  return (phase_ == phase::take && !(parts_done_ && backing_off())) ||
         (phase_ == phase::flip && boundary_.has_value()) || (phase_ == phase::fold && trim_left_);
}

compaction_step group_committer::next_step(bool acks_wait) const {
  compaction_step step;
  if (phase_ == phase::fold && trim_left_) {
    step.what = compaction_step::kind::trim;
    step.trim_bytes = sizes_.take_rows * kTrimBytesPerTakeRow / (acks_wait ? kAckWaitDivisor : 1);
    step.trim_bytes = std::max<std::size_t>(step.trim_bytes, 1);
  } else if (phase_ == phase::flip && boundary_) {
    // The boundary is known once the commit that took the last part has committed (a failed
    // one is retried first, merged with the later ones).
    step.what = compaction_step::kind::flip;
    step.generation = generation_;
    step.changes = &flip_rows_;
    step.boundary = *boundary_;
  }
  return step;
}

void group_committer::note_failure() {
  if (++failed_jobs_ >= 2) {
    const auto delay = std::min<std::chrono::milliseconds>(
        kRetryMost, kRetryFirst * (std::size_t{1} << std::min<std::size_t>(failed_jobs_ - 2, 6)));
    retry_at_ = std::chrono::steady_clock::now() + delay;
  }
}

bool group_committer::backing_off() const {
  return failed_jobs_ >= 2 && std::chrono::steady_clock::now() < retry_at_;
}

void group_committer::take_job_result(outcome& o) {
  const auto r = worker_.take_result();
  if (!r) return;
  const job_kind done = std::exchange(posted_, job_kind::none);
  if (!r->result.ok()) {
    o.compaction_error = r->result;  // the same job is posted again (batch_ is kept)
    note_failure();
    return;
  }
  failed_jobs_ = 0;
  if (done == job_kind::stage) {
    o.rows += batch_.size();
    batch_ = {};
    cleared_staged_ = true;
  } else if (done == job_kind::fold) {
    o.rows += r->folded;
    if (r->folded < sizes_.job_rows) fold_left_ = false;
    if (!fold_left_ && !trim_left_) phase_ = phase::idle;
  }
}

void group_committer::post_job(outcome& o) {
  if (worker_.busy()) return;
  if (backing_off()) return;
  rows_step step;
  if (phase_ == phase::fold && fold_left_) {
    if (!current_) {
      const auto g = store_.generation();
      if (!g) {
        o.compaction_error = g.error();
        note_failure();
        return;
      }
      current_ = *g;
    }
    step.what = rows_step::kind::fold;
    step.generation = *current_;
    step.limit = sizes_.job_rows;
    posted_ = job_kind::fold;
  } else if (phase_ == phase::stage) {
    if (batch_.empty() && !order_.done()) batch_ = order_.next(sizes_.job_rows);
    if (batch_.empty() && cleared_staged_) {
      phase_ = phase::flip;  // every row staged
      return;
    }
    step.what = rows_step::kind::stage;
    step.generation = generation_;
    if (!cleared_staged_) step.cleared = flip_rows_.cleared_swarms;  // first: rows after win
    step.erased = batch_.erased;
    step.rows = batch_.rows;
    posted_ = job_kind::stage;
  } else {
    return;
  }
  // What the job points to (the batch, the parts, the cleared swarms) stays unchanged until its
  // result is taken. It owns a flipped change set, if one waits: the worker frees it.
  worker_.post([this, step, retired = std::move(retired_)] {
    const auto r = write_rows_step(store_.rows(), step);
    return r ? rows_job_result{{}, *r} : rows_job_result{r.error(), 0};
  });
}

void group_committer::advance(const compaction_step& step, const commit_outcome& out, outcome& o) {
  switch (step.what) {
    case compaction_step::kind::none:
      break;
    case compaction_step::kind::trim:
      if (!out.trimmed.more) trim_left_ = false;
      if (!fold_left_ && !trim_left_) phase_ = phase::idle;
      break;
    case compaction_step::kind::flip:
      o.rows +=
          flip_rows_.swarms.size() + flip_rows_.workers.size() + flip_rows_.cleared_swarms.size();
      o.compacted = true;
      o.compaction_commits = commits_;
      retired_ = std::make_shared<std::vector<state_changes>>(std::move(parts_));
      reset_job();
      current_ = generation_;
      phase_ = phase::fold;
      fold_left_ = true;
      trim_left_ = true;
      break;
  }
}

checkpoint group_committer::take_final() {
  // One whole compaction, so that a clean restart loads rows and replays nothing. A compaction
  // in chunks not yet current is folded into it: its parts were taken first. The worker's job
  // ends first (the whole compaction writes the rows file on this thread); what it staged of a
  // generation never made current is dropped by the whole compaction.
  worker_.wait();
  (void)worker_.take_result();
  posted_ = job_kind::none;
  checkpoint c = service_.take_checkpoint(true);
  if (phase_ == phase::take || phase_ == phase::stage || phase_ == phase::flip) {
    std::vector<state_changes> all;
    if (phase_ != phase::take) {
      // Prepared already: the flip's rows go first (their completions were applied to the
      // parts), as a part of their own.
      all.push_back(std::move(flip_rows_));
      flip_rows_ = {};
    }
    for (auto& p : parts_) all.push_back(std::move(p));
    all.push_back(std::move(c.state));
    parts_ = std::move(all);
    prepare_parts();
    c.state = flatten(parts_);
    c.state.cleared_swarms = std::move(flip_rows_.cleared_swarms);
    c.state.swarms = std::move(flip_rows_.swarms);
    c.state.workers = std::move(flip_rows_.workers);
  }
  reset_job();
  return c;
}

checkpoint group_committer::take_part(outcome& o) {
  // Ingest waits for the lock meanwhile: ~0.25 ms per 256 rows here (docs/performance.md).
  const auto t0 = std::chrono::steady_clock::now();
  if (!parts_done_) {
    const std::size_t limit = sizes_.take_rows;
    state_changes part = service_.take_rows(limit);
    sort_part(part);  // outside the lock: staged in key order (docs/storage.md)
    rows_taken_ += rows_in(part);
    // A fingerprint changed again after its part was taken is taken again: under steady churn
    // the parts would only end at max_parts, holding copies of the same rows many times over.
    // Once as many rows as the state held at the start were taken, the rest is taken whole.
    parts_done_ = rows_in(part) < limit || parts_.size() + 1 >= sizes_.max_parts ||
                  rows_taken_ >= take_budget_;
    parts_.push_back(std::move(part));
    if (!parts_done_) return service_.take_checkpoint(false);  // the next part, next commit
  }
  // The rest is taken whole once the generation it is staged under is known. While the store
  // cannot tell, the commits ask again, as a failed job is retried (first at once, then after a
  // delay doubling from kRetryFirst), and take no further part.
  if (backing_off()) return service_.take_checkpoint(false);
  const result<std::int64_t> current = store_.generation();
  if (!current) {
    o.compaction_error = current.error();
    note_failure();
    return service_.take_checkpoint(false);
  }
  failed_jobs_ = 0;
  parts_done_ = false;
  staged_take t = service_.take_staged_checkpoint();
  o.take_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rows_taken_ += rows_in(t.rows);
  sort_part(t.rows);
  parts_.push_back(std::move(t.rows));
  o.began_rows = rows_taken_;
  generation_ = current.value() + 1;
  prepare_parts();
  order_.reset(parts_);
  phase_ = phase::stage;
  return std::move(t.commit);
}

void group_committer::fold_final(outcome& o) {
  // The whole compaction truncated the log. Its rows are folded now, so that the next start
  // reads them without an overlay; a failure leaves them to the next start's fold.
  current_.reset();
  trim_left_ = false;
  fold_left_ = true;
  phase_ = phase::fold;
  if (const auto g = store_.generation()) {
    rows_step fold;
    fold.what = rows_step::kind::fold;
    fold.generation = *g;
    fold.limit = std::numeric_limits<std::size_t>::max();
    if (const auto n = write_rows_step(store_.rows(), fold)) {
      o.rows += *n;
      fold_left_ = false;
      phase_ = phase::idle;
    } else {
      o.compaction_error = n.error();
    }
  }
}

group_committer::outcome group_committer::commit_once(bool final) {
  outcome o;
  if (!final) take_job_result(o);
  if (!final && phase_ == phase::idle && !has_failed_ && service_.log_bytes() > 0 &&
      service_.log_bytes() >= sizes_.compact_log_bytes) {
    reset_job();
    phase_ = phase::take;
    commits_ = 0;
    take_budget_ = std::max(sizes_.take_rows, service_.read([](const shared_economics_state& s) {
      return s.counters().fingerprints;
    }));
  }
  checkpoint c;
  if (final) {
    c = take_final();
  } else if (phase_ == phase::take) {
    c = take_part(o);
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
  if (!final) post_job(o);
  // Acks wait for this commit (it carries a log record): a smaller trim (docs/storage.md).
  const compaction_step step = final ? compaction_step{} : next_step(!c.log.empty());
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
  o.rows += c.state.fingerprints.size() + c.log.size() + c.sequences.size();
  if (final) {
    o.compacted = true;
    fold_final(o);
  } else {
    ++commits_;
    advance(step, out, o);
  }
  service_.mark_durable(c);
  return o;
}

}  // namespace loopguard::daemon
