// One group commit at a time, without a thread (the checkpointer's thread calls it; the tests
// call it directly): takes the log record and sequence numbers from the swarm_service, writes
// them as one transaction, keeps a failed checkpoint to merge with the next, and carries a
// compaction forward one bounded step per commit (docs/storage.md, "Compaction in chunks"):
//
//   fold   staged rows left by the previous compaction (or by one a crash cut short) are moved
//          into the rows, `chunk_rows` per commit (chunk_rows / kAckWaitDivisor in a commit
//          that carries a log record: acks wait for it), and the log records its flip covered
//          are deleted, kTrimBytesPerRow bytes per row of the step, until neither is left;
//   idle   until the log written since the last compaction reaches `compact_log_bytes`;
//   take   the changed rows are taken in parts, `chunk_rows` per hold of the state's lock,
//          one part per commit, until a part comes back short; then the last part is taken
//          together with the log record it covers (its boundary): a row taken in an earlier
//          part and changed since is changed again, so it is in a later part;
//   stage  the changed rows are written to the staged table of the next generation,
//          `chunk_rows` per commit (fewer, as for the fold), in the key order of the rows
//          (staging_order), so that the fold rewrites neighbouring pages;
//   flip   one commit writes the swarm and worker rows, makes the new generation current and
//          records the boundary as the log's floor (the records up to it are covered, so a
//          restore skips them: deleting ~1M events of log in this one commit made acks wait
//          for it); then fold again.
//
// A crash or a failed commit at any point leaves a store that restores exactly what was last
// committed: before the flip the staged rows of the new generation are ignored (the old rows
// and the whole log restore), after it they overlay the rows and the log starts after the
// boundary. The final commit (a clean stop) is one whole compaction, as before schema 5.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "service/staging_order.hpp"
#include "service/swarm_service.hpp"
#include "store/checkpoint_store.hpp"

namespace loopguard::daemon {

class group_committer {
 public:
  static constexpr std::size_t kChunkRows = 1024;
  // Then the last part is taken anyway (ingest changing rows faster than parts take them).
  static constexpr std::size_t kMaxParts = 1024;
  // A commit that acks wait for (it carries a log record) carries a step of chunk_rows / 8.
  static constexpr std::size_t kAckWaitDivisor = 8;
  // A fold step also deletes up to this many bytes of covered log records per row it may move
  // (1 MiB in a step of 1024 rows; about as long to write as the rows, docs/performance.md).
  static constexpr std::size_t kTrimBytesPerRow = 1024;

  group_committer(swarm_service& service, checkpoint_store& store, std::size_t compact_log_bytes,
                  std::size_t chunk_rows = kChunkRows, std::size_t max_parts = kMaxParts);

  struct outcome {
    status result;            // ok, or why the commit failed (it is retried with the next)
    std::uint64_t epoch = 0;  // durable once `result` is ok
    bool wrote = false;       // a transaction was written (false: nothing to write)
    bool compacted = false;   // a compaction became current (a flip, or the final one)
    std::size_t rows = 0;     // rows and records written (for the metrics)
    // A compaction began with this commit: the rows it took and how long the take held the
    // state's lock (docs/storage.md, "The change set is taken in one hold of the lock").
    std::optional<std::size_t> began_rows;
    double take_seconds = 0;
    std::size_t compaction_commits = 0;  // with `compacted` (a flip): the commits it took
  };
  // One group commit, carrying one step of the compaction in progress. `final`: the last one
  // (a clean stop), a whole compaction that also covers a compaction in progress.
  outcome commit_once(bool final);

  // A compaction (or the fold after one) is in progress: the caller should commit again soon.
  bool compacting() const { return phase_ != phase::idle; }

 private:
  enum class phase : std::uint8_t { fold, idle, take, stage, flip };
  compaction_step next_step(bool acks_wait);
  std::size_t step_rows(bool acks_wait) const;
  void advance(const compaction_step& step, const commit_outcome& out, outcome& o);
  // A part's rows of a swarm completed in a later part are dropped; the flip's rows gathered.
  void prepare_parts();
  checkpoint take_final();           // the final commit's whole compaction
  checkpoint take_part(outcome& o);  // a commit of the take phase

  void reset_job();

  swarm_service& service_;
  checkpoint_store& store_;
  std::size_t compact_log_bytes_;
  std::size_t chunk_rows_;
  std::size_t max_parts_;
  phase phase_ = phase::fold;         // at start the store may hold staged rows: fold them first
  bool trim_left_ = true;             // (fold) covered log records may be left: the next step trims
  std::vector<state_changes> parts_;  // the change set, in the order taken (take, stage)
  state_changes flip_rows_;           // every part's completions, the swarm and worker rows
  staging_order order_;               // the parts merged in key order (stage)
  staging_batch batch_;               // the rows of the stage step being written
  std::size_t rows_taken_ = 0;
  std::size_t take_budget_ = 0;  // rows the parts may take (the fingerprints held at the start)
  std::optional<std::int64_t> boundary_;  // the id of the last log record the parts cover
  std::int64_t generation_ = 0;           // of the staged rows
  std::size_t commits_ = 0;               // commits since the compaction began
  checkpoint failed_;                     // a checkpoint that failed, retried with the next one
  bool has_failed_ = false;
};

}  // namespace loopguard::daemon
