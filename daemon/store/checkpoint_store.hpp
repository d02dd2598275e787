// Where checkpoints go (docs/storage.md). A small interface of single steps so that a test can
// fail any one of them (fault_injecting_store) and prove that a checkpoint is all or nothing.
#pragma once

#include <cstddef>
#include <functional>
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
  bool empty() const {
    return state.empty() && log.empty() && sequences.empty() && retention.empty();
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
  virtual status truncate_log() = 0;  // deletes every log record
  virtual status append_log(std::string_view record) = 0;
  virtual status commit() = 0;
  virtual void rollback() noexcept = 0;
};

// Writes `c` as one transaction: begin; for a compaction truncate the log and the steps in
// state_changes order; append the log record; the sequences; commit. On any failure rolls back and
// returns it; the store is then as before.
status write_checkpoint(checkpoint_store& store, const checkpoint& c);

}  // namespace loopguard::daemon
