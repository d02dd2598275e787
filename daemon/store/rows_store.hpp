// The fingerprint rows of a checkpoint database (docs/storage.md, "The rows file"): the rows as
// of the last compaction, and the staged rows of compactions. They live in a file of their own
// beside the main one, so that a compaction's writes never go through the WAL that the group
// commits (and the acks waiting for them) go through. A small interface of single steps, like
// checkpoint_store, so that a test can fail any one of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "loopguard/status.hpp"
#include "state/state_rows.hpp"

namespace loopguard::daemon {

// Receives the loaded fingerprint rows one at a time on the thread running the load: the stored
// rows in key order, then the current generation's staged rows (load()). The row is the store's,
// decoded into again for the next one (no allocation per row): the sink may move from its stats,
// and leaves its swarm and key.
using fingerprint_sink = std::function<void(fingerprint_row& row)>;

// Contract: between begin() and commit() every step belongs to one transaction of the rows file
// alone; commit() makes it durable (or fails and changes nothing); rollback() discards it. Not
// thread-safe: one thread at a time (the compaction's worker, or the checkpointer while the worker
// is idle).
class rows_store {
 public:
  virtual ~rows_store() = default;
  // Streams the rows as `generation` (the main file's current one) has them: the stored rows
  // overlaid by that generation's staged rows (a staged row replaces the stored one, a staged
  // erasure removes it, the latest staged copy of a fingerprint wins). Throws nothing: a read
  // error or a malformed row is returned.
  virtual status load(std::int64_t generation, const fingerprint_sink& sink) = 0;
  virtual status begin() = 0;
  virtual status stage_fingerprint(std::int64_t generation, const fingerprint_row& row) = 0;
  virtual status stage_erase(std::int64_t generation, const fingerprint_ref& ref) = 0;
  // Stages an erasure of every stored row of `swarm` (completed, or expired): rows staged after
  // it in the same generation win over it.
  virtual status stage_clear(std::int64_t generation, std::string_view swarm) = 0;
  // Moves up to `limit` staged rows, oldest first, out of the staged table: those of `current`
  // (the main file's current generation) into the rows (an erasure deletes the row), the others
  // (of a compaction that never became current) are dropped. Returns how many it moved.
  virtual result<std::size_t> fold_staged(std::int64_t current, std::size_t limit) = 0;
  virtual status commit() = 0;
  virtual void rollback() noexcept = 0;
};

}  // namespace loopguard::daemon
