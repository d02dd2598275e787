// Where checkpoints go (docs/storage.md). A small interface of single steps so that a test can
// fail any one of them (fault_injecting_store) and prove that a checkpoint is all or nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "state/sequence_ledger.hpp"
#include "state/state_rows.hpp"

namespace loopguard::daemon {

// Errors are values: ok, or a message naming the step, the file and the cause.
struct store_status {
  std::string error;  // empty: ok
  bool ok() const { return error.empty(); }
  static store_status success() { return {}; }
  static store_status failure(std::string message) { return {std::move(message)}; }
};

// One group commit. Usually a log record (the operations applied since the previous one) and
// the sequence numbers that advanced. A compaction also carries every row changed since the
// previous compaction: it truncates the log, writes the rows, then appends `log` (the
// operations applied after the rows were taken; empty when taken together).
struct checkpoint {
  bool compact = false;
  state_changes state;           // only when compact
  std::vector<std::string> log;  // event_log records, oldest first (more after a retry)
  std::vector<sequence_row> sequences;
  bool empty() const { return state.empty() && log.empty() && sequences.empty(); }
  // Folds `newer` (taken later) into this failed checkpoint so both commit together.
  void merge_newer(checkpoint&& newer);
};

// What a store holds: the rows as of the last compaction, the log records written since (in
// order), and the sequence numbers. Restoring = rows, then replay every record.
struct stored_state {
  state_snapshot state;
  std::vector<std::string> log;
  std::vector<sequence_row> sequences;
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
  virtual store_status load(stored_state& out) = 0;
  // load(), but the fingerprint rows go to `sink` as they are read (out.state.fingerprints
  // stays empty), so that another thread can restore them meanwhile. On failure the rows
  // already given to the sink are part of a refused file. This default loads everything,
  // then gives the rows in one chunk.
  virtual store_status load_streaming(stored_state& out, const fingerprint_sink& sink);
  virtual store_status begin() = 0;
  virtual store_status clear_swarm(std::string_view swarm) = 0;
  virtual store_status put_swarm(const swarm_row& row) = 0;
  virtual store_status put_worker(const worker_row& row) = 0;
  virtual store_status put_fingerprint(const fingerprint_row& row) = 0;
  virtual store_status erase_fingerprint(const fingerprint_ref& ref) = 0;
  virtual store_status put_sequence(const sequence_row& row) = 0;
  virtual store_status truncate_log() = 0;  // deletes every log record
  virtual store_status append_log(std::string_view record) = 0;
  virtual store_status commit() = 0;
  virtual void rollback() noexcept = 0;
};

// Writes `c` as one transaction: begin; for a compaction truncate the log and the steps in
// state_changes order; append the log record; the sequences; commit. On any failure rolls back and
// returns it; the store is then as before.
store_status write_checkpoint(checkpoint_store& store, const checkpoint& c);

}  // namespace loopguard::daemon
