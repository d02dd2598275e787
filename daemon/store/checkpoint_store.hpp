// Where checkpoints go (docs/storage.md). A small interface of single steps so that a test can
// fail any one of them (fault_injecting_store) and prove that a checkpoint is all or nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/status.hpp"
#include "state/idle_tracker.hpp"
#include "state/sequence_ledger.hpp"
#include "state/state_rows.hpp"
#include "store/rows_store.hpp"

namespace loopguard::daemon {

// Every step returns a status: ok, or a message naming the step, the file and the cause.

// One group commit. Usually a log record (the operations applied since the previous one) and
// the sequence numbers that advanced. A compaction also carries every row changed since the
// previous compaction: it truncates the log, writes the rows, then appends `log` (the
// operations applied after the rows were taken; empty when taken together).
struct checkpoint {
  // Every event applied in this epoch or before is in this checkpoint (swarm_service.hpp,
  // "Epochs"); once it commits, they may be acknowledged.
  std::uint64_t epoch = 0;
  bool compact = false;
  state_changes state;                  // only when compact
  std::vector<std::string> log;         // event_log records, oldest first (more after a retry)
  std::vector<sequence_row> sequences;  // with their `seen`
  retention_changes retention;          // written after the sequences
  // A compaction in chunks (group_committer) took its change set with this checkpoint: the
  // first `*log_mark` records of `log` are the ones its rows cover, and write_checkpoint
  // reports the id of the last of them (its boundary).
  std::optional<std::size_t> log_mark;
  bool empty() const {
    return state.empty() && log.empty() && sequences.empty() && retention.empty() &&
           !log_mark.has_value();
  }
  // Folds `newer` (taken later) into this failed checkpoint so both commit together.
  void merge_newer(checkpoint&& newer);
};

// What a store holds besides the fingerprint rows (those go to a fingerprint_sink): the swarm
// and worker rows as of the last compaction, the log records written since (in order), and the
// sequence numbers. Restoring = rows, then replay every record (swarm_service::restore_from).
struct stored_state {
  state_snapshot state;
  std::vector<std::string> log;
  std::vector<sequence_row> sequences;  // with their `seen`
  std::vector<swarm_seen_row> swarms_seen;
  std::vector<expired_row> expired;
};

// What one trim_log() did.
struct log_trim {
  std::size_t records = 0;  // deleted
  bool more = false;        // covered records remain
};

// The main file of a checkpoint database. Its fingerprint rows are in its rows_store (rows()), a
// file of its own. Contract: between begin() and commit() every step belongs to one transaction
// of the main file; commit() makes it durable (or fails and changes nothing); rollback()
// discards it. Not thread-safe: one checkpointer thread owns the store.
class checkpoint_store {
 public:
  virtual ~checkpoint_store() = default;
  // Reads everything; the fingerprint rows go to `sink` as they are read (the result's
  // state.fingerprints stays empty), so that another thread can restore them meanwhile. On
  // failure the rows already given to the sink are part of a refused file.
  virtual result<stored_state> load_streaming(const fingerprint_sink& sink) = 0;
  virtual status begin() = 0;
  // Deletes the swarm's swarm and worker rows (its fingerprint rows: rows_store::stage_clear).
  virtual status clear_swarm(std::string_view swarm) = 0;
  virtual status put_swarm(const swarm_row& row) = 0;
  virtual status put_worker(const worker_row& row) = 0;
  virtual status put_sequence(const sequence_row& row) = 0;
  // Retention (schema 4): the retention_changes steps, in the order written there.
  virtual status erase_sequence(const worker_identity& id) = 0;
  virtual status put_seen(const seen_row& row) = 0;  // updates an existing sequence row only
  virtual status put_expired(const expired_row& row) = 0;
  virtual status erase_expired(const worker_identity& id) = 0;
  virtual status erase_swarm_seen(std::string_view swarm) = 0;
  virtual status put_swarm_seen(const swarm_seen_row& row) = 0;
  virtual status truncate_log() = 0;  // deletes every log record (the floor stays)
  // Appends a record. Its id is above every record's and the floor, so ids only grow.
  virtual status append_log(std::string_view record) = 0;
  // Compaction in chunks (docs/storage.md "Compaction in chunks"). A staged row or erasure (in
  // the rows file) belongs to a generation; the current generation is the last one flipped here.
  // The id of the last log record, or the floor when it is higher (every record trimmed): the
  // boundary of records appended after it.
  virtual result<std::int64_t> log_end() = 0;
  // Makes `generation` current (its staged rows, in the rows file, now overlay the rows) and
  // records that the log records up to `boundary` are covered by them (the log's floor): a
  // restore skips them, and trim_log() deletes them later, a bounded part per commit.
  virtual status flip(std::int64_t generation, std::int64_t boundary) = 0;
  // Deletes covered log records (at or below the floor), oldest first: at least one, and then
  // as long as fewer than `max_bytes` of record data were deleted.
  virtual result<log_trim> trim_log(std::size_t max_bytes) = 0;
  // The current generation (a read: no transaction needed).
  virtual result<std::int64_t> generation() = 0;
  // The rows file.
  virtual rows_store& rows() = 0;
  virtual status commit() = 0;
  virtual void rollback() noexcept = 0;
};

// The main file's part of a compaction in chunks (group_committer), written in a group
// commit's transaction after its records, sequence numbers and retention changes.
struct compaction_step {
  enum class kind : std::uint8_t { none, flip, trim };
  kind what = kind::none;
  std::int64_t generation = 0;             // flip
  const state_changes* changes = nullptr;  // flip: its cleared swarms, swarm and worker rows
  std::int64_t boundary = 0;               // flip: the last log record the rows cover
  std::size_t trim_bytes = 0;              // trim: covered log bytes deleted at most (trim_log)
};

// What write_checkpoint learned while writing.
struct commit_outcome {
  std::optional<std::int64_t> boundary;  // with c.log_mark: the id of the mark's last record
  log_trim trimmed;                      // trim: covered log records deleted
};

// Writes `c` as one transaction of the main file: begin; append the log records; the
// sequences; the retention changes; `step`; commit. On any failure rolls back and returns it;
// the store then restores as before. A compaction (`c.compact`, a whole one) first stages its
// rows in the rows file as the next generation (one transaction there, after folding what was
// staged), then, in the main transaction, truncates the log, writes the swarm and worker rows
// and makes that generation current; when that fails, the rows file keeps the fold and the
// staged generation, which never became current (a restore ignores it, the next fold drops
// it). Its staged rows are folded later (write_rows_step): until then they overlay the rows.
status write_checkpoint(checkpoint_store& store, const checkpoint& c,
                        const compaction_step& step = {}, commit_outcome* out = nullptr);

// The rows file's part of a compaction in chunks, one transaction each (group_committer runs
// them on the compaction's worker, off the group commits' path).
struct rows_step {
  enum class kind : std::uint8_t { stage, fold };
  kind what = kind::stage;
  std::int64_t generation = 0;  // stage: the generation staged; fold: the current one
  // stage: the swarms whose stored rows are erased first (completed or expired), then the rows
  // and erasures, each fingerprint at most once (so they may go in any order)
  std::span<const std::string> cleared;
  std::span<const fingerprint_ref* const> erased;
  std::span<const fingerprint_row* const> rows;
  std::size_t limit = 0;  // fold: staged rows moved at most
};

// Writes `step` as one transaction of `rows`: the number of staged rows it folded (fold), or 0.
// On failure rolls back.
result<std::size_t> write_rows_step(rows_store& rows, const rows_step& step);

}  // namespace loopguard::daemon
