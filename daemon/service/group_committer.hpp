// One group commit at a time, without a thread (the checkpointer's thread calls it; the tests
// call it directly): takes the log record and sequence numbers from the swarm_service, writes
// them as one transaction of the main file, keeps a failed checkpoint to merge with the next,
// and carries a compaction forward (docs/storage.md, "Compaction in chunks"). The compaction's
// rows go to the rows file in transactions of their own, run by a rows_worker (a thread in the
// daemon), so no group commit waits for them:
//
//   fold   staged rows left by the previous compaction (or by one a crash cut short) are moved
//          into the rows by the worker, `job_rows` per transaction, while the group commits
//          delete the log records the flip covered (a bounded trim in each), until neither is
//          left;
//   idle   until the log written since the last compaction reaches `compact_log_bytes`;
//   take   the changed rows are taken in parts, `take_rows` per hold of the state's lock, one
//          part per group commit, until a part comes back short; then the last part is taken
//          together with the log record it covers (its boundary): a row taken in an earlier
//          part and changed since is changed again, so it is in a later part;
//   stage  the worker stages the changed rows as the next generation, first an erasure of the
//          stored rows of every swarm completed or expired, then `job_rows` rows per
//          transaction in the key order of the rows (staging_order);
//   flip   once every row is staged, one group commit writes the swarm and worker rows, makes
//          the new generation current and records the boundary as the log's floor (a restore
//          skips the records up to it); then fold again.
//
// A crash or a failed commit at any point leaves files that restore exactly what was last
// committed: before the flip the staged rows of the new generation are ignored (the old rows
// and the whole log restore), after it they overlay the rows and the log starts after the
// boundary. The final commit (a clean stop) is one whole compaction (write_checkpoint).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "service/rows_worker.hpp"
#include "service/staging_order.hpp"
#include "service/swarm_service.hpp"
#include "store/checkpoint_store.hpp"

namespace loopguard::daemon {

class group_committer {
 public:
  // Rows per part of the take: each part holds the state's lock (~0.25 ms here).
  static constexpr std::size_t kTakeRows = 256;
  // Then the last part is taken anyway (ingest changing rows faster than parts take them).
  static constexpr std::size_t kMaxParts = 4096;
  // Rows staged or folded per transaction of the rows file. Each commits with an fsync there:
  // small ones keep little unsynced data for the main file's fsyncs to wait behind (ext4
  // writes it with their journal commit); 4096 made acks' p99 during a compaction ~2x worse
  // (docs/performance.md, "The rows file").
  static constexpr std::size_t kJobRows = 512;
  // A trim deletes up to take_rows times this many bytes of covered log records per group
  // commit (256 KiB), an eighth of it in a commit that acks wait for (one carrying a record).
  static constexpr std::size_t kTrimBytesPerTakeRow = 1024;
  static constexpr std::size_t kAckWaitDivisor = 8;
  static constexpr std::chrono::milliseconds kRetryFirst{100};
  static constexpr std::chrono::milliseconds kRetryMost{5000};

  // When a compaction begins and how it is cut up; the tests make the parts and jobs small.
  struct sizes {
    std::size_t compact_log_bytes;  // a compaction begins after this much log (--compact-log-mb)
    std::size_t take_rows = kTakeRows;
    std::size_t max_parts = kMaxParts;
    std::size_t job_rows = kJobRows;
  };
  // `worker` runs the rows-file transactions; null: an inline one (each runs as it is posted).
  group_committer(swarm_service& service, checkpoint_store& store, sizes chosen,
                  rows_worker* worker = nullptr);

  struct outcome {
    status result;            // ok, or why the commit failed (it is retried with the next)
    std::uint64_t epoch = 0;  // durable once `result` is ok
    bool wrote = false;       // a transaction was written (false: nothing to write)
    bool compacted = false;   // a compaction became current (a flip, or the final one)
    std::size_t rows = 0;     // rows and records written (for the metrics)
    // A compaction began with this commit: the rows it took and how long the take held the
    // state's lock (docs/storage.md, "The change set is taken in parts").
    std::optional<std::size_t> began_rows;
    double take_seconds = 0;
    std::size_t compaction_commits = 0;  // with `compacted` (a flip): the commits it took
    // A rows-file transaction of the compaction failed (it is retried; no ack waits for it).
    status compaction_error;
  };
  // One group commit; picks up the rows worker's last result and posts its next job. `final`:
  // the last one (a clean stop), a whole compaction that also covers a compaction in progress.
  outcome commit_once(bool final);

  // A compaction (or the fold after one) is in progress.
  bool compacting() const { return phase_ != phase::idle; }
  // Parts of a flipped change set held for the next job to free (0: none; see retired_).
  std::size_t retired_parts() const { return retired_ ? retired_->size() : 0; }
  // The next commit has a compaction step of the main file to write (the caller should commit
  // again at once rather than wait for work).
  bool main_step_pending() const;

 private:
  enum class phase : std::uint8_t { fold, idle, take, stage, flip };
  enum class job_kind : std::uint8_t { none, stage, fold };
  compaction_step next_step(bool acks_wait) const;
  void advance(const compaction_step& step, const commit_outcome& out, outcome& o);
  void take_job_result(outcome& o);
  void note_failure();       // a job or a read failed: the next try waits (failed_jobs_)
  bool backing_off() const;  // it waits now
  void post_job(outcome& o);
  // A part's rows of a swarm completed in a later part are dropped; the flip's rows gathered.
  void prepare_parts();
  checkpoint take_final();           // the final commit's whole compaction
  void fold_final(outcome& o);       // after it: its staged rows folded at once
  checkpoint take_part(outcome& o);  // a commit of the take phase

  void reset_job();

  swarm_service& service_;
  checkpoint_store& store_;
  std::unique_ptr<rows_worker> own_worker_;  // when none was given
  rows_worker& worker_;
  sizes sizes_;                // each at least 1 but compact_log_bytes
  phase phase_ = phase::fold;  // at start the store may hold staged rows: fold them first
  bool fold_left_ = true;      // (fold) staged rows may be left: the worker folds
  bool trim_left_ = true;      // (fold) covered log records may be left: the next commit trims
  std::optional<std::int64_t> current_;  // the current generation, once read
  job_kind posted_ = job_kind::none;     // the worker's job
  bool cleared_staged_ = false;          // (stage) the completed swarms' erasures are staged
  // Consecutive failed jobs (or reads of the generation): the first is tried again at once,
  // later ones after a delay that doubles from kRetryFirst up to kRetryMost (a full disk is not
  // hammered).
  std::size_t failed_jobs_ = 0;
  std::chrono::steady_clock::time_point retry_at_{};
  std::vector<state_changes> parts_;  // the change set, in the order taken (take, stage)
  // A flipped change set, freed with the job posted next (the first fold job) on the rows
  // worker's thread: a million rows take ~40 ms to free, which the acks of the flip's commit
  // would otherwise wait for. (The inline worker frees it as it runs the job; a final commit
  // right after the flip leaves it to the destructor.)
  std::shared_ptr<std::vector<state_changes>> retired_;
  state_changes flip_rows_;  // every part's completions, the swarm and worker rows
  staging_order order_;      // the parts merged in key order (stage)
  staging_batch batch_;      // the rows of the stage job being written
  std::size_t rows_taken_ = 0;
  bool parts_done_ = false;      // (take) every part is taken: the rest is taken whole next
  std::size_t take_budget_ = 0;  // rows the parts may take (the fingerprints held at the start)
  std::optional<std::int64_t> boundary_;  // the id of the last log record the parts cover
  std::int64_t generation_ = 0;           // of the staged rows
  std::size_t commits_ = 0;               // commits since the compaction began
  checkpoint failed_;                     // a checkpoint that failed, retried with the next one
  bool has_failed_ = false;
};

}  // namespace loopguard::daemon
