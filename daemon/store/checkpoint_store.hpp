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

// Receives loaded fingerprint rows a chunk at a time, in key order, on the thread running
// load_streaming(). It may swap `chunk` with another vector (e.g. one it has emptied before),
// whose rows the store then discards: this recycles the chunks' memory.
using fingerprint_sink = std::function<void(std::vector<fingerprint_row>& chunk)>;

// What one trim_log() did.
struct log_trim {
  std::size_t records = 0;  // deleted
  bool more = false;        // covered records remain
};

// Contract: between begin() and commit() every step belongs to one transaction; commit() makes
// it durable (or fails and changes nothing); rollback() discards it. Not thread-safe: one
// checkpointer thread owns the store.
class checkpoint_store {
 public:
  virtual ~checkpoint_store() = default;
  // Reads everything; the fingerprint rows go to `sink` as they are read (the result's
  // state.fingerprints stays empty), so that another thread can restore them meanwhile. On
  // failure the rows already given to the sink are part of a refused file.
  virtual result<stored_state> load_streaming(const fingerprint_sink& sink) = 0;
  virtual status begin() = 0;
  virtual status clear_swarm(std::string_view swarm) = 0;
  virtual status put_swarm(const swarm_row& row) = 0;
  virtual status put_worker(const worker_row& row) = 0;
  virtual status put_fingerprint(const fingerprint_row& row) = 0;
  virtual status erase_fingerprint(const fingerprint_ref& ref) = 0;
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
  // Compaction in chunks (schema 5, docs/storage.md "Compaction in chunks"). A staged row or
  // erasure belongs to a generation; the store's current generation is the last one flipped.
  // The id of the last log record, or the floor when it is higher (every record trimmed): the
  // boundary of records appended after it.
  virtual result<std::int64_t> log_end() = 0;
  virtual status stage_fingerprint(std::int64_t generation, const fingerprint_row& row) = 0;
  virtual status stage_erase(std::int64_t generation, const fingerprint_ref& ref) = 0;
  // Makes `generation` current (its staged rows now overlay the rows) and records that the
  // log records up to `boundary` are covered by them (the log's floor, schema 6): a restore
  // skips them, and trim_log() deletes them later, a bounded part per commit.
  virtual status flip(std::int64_t generation, std::int64_t boundary) = 0;
  // Deletes covered log records (at or below the floor), oldest first: at least one, and then
  // as long as fewer than `max_bytes` of record data were deleted.
  virtual result<log_trim> trim_log(std::size_t max_bytes) = 0;
  // Moves up to `limit` staged rows, oldest first, out of the staged table: those of the
  // current generation into the rows (an erasure deletes the row), others (of a compaction
  // that never became current) are dropped. Returns how many it moved.
  virtual result<std::size_t> fold_staged(std::size_t limit) = 0;
  // The current generation (a read: no transaction needed).
  virtual result<std::int64_t> generation() = 0;
  virtual status commit() = 0;
  virtual void rollback() noexcept = 0;
};

// One step of a compaction in chunks (group_committer), written in a group commit's
// transaction after its records, sequence numbers and retention changes.
struct compaction_step {
  enum class kind : std::uint8_t { none, stage, flip, fold };
  kind what = kind::none;
  std::int64_t generation = 0;  // stage, flip
  // stage: each fingerprint at most once per step (so erasures and rows may go in any order)
  std::span<const fingerprint_ref* const> erased;
  std::span<const fingerprint_row* const> rows;
  const state_changes* changes = nullptr;  // flip: its cleared swarms, swarm and worker rows
  std::int64_t boundary = 0;               // flip: the last log record the rows cover
  std::size_t limit = 0;                   // fold: staged rows moved at most
  std::size_t trim_bytes = 0;              // fold: covered log bytes deleted (trim_log); 0: no trim
};

// What write_checkpoint learned while writing.
struct commit_outcome {
  std::optional<std::int64_t> boundary;  // with c.log_mark: the id of the mark's last record
  std::size_t folded = 0;                // fold: staged rows moved
  log_trim trimmed;                      // fold: covered log records deleted
};

// Writes `c` as one transaction: begin; for a compaction fold every staged row, truncate the
// log and write the steps in state_changes order; append the log records; the sequences; the
// retention changes; `step`; commit. On any failure rolls back and returns it; the store is
// then as before.
status write_checkpoint(checkpoint_store& store, const checkpoint& c,
                        const compaction_step& step = {}, commit_outcome* out = nullptr);

}  // namespace loopguard::daemon
