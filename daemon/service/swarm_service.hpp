// The daemon's one piece of cross-connection state: the swarm state, the sequence ledger and
// the checkpoint epoch, behind one mutex. No sockets and no files: sessions call it with
// parsed messages, the checkpointer takes checkpoints from it.
//
// Epochs: every applied event belongs to the epoch of the checkpoint that will contain it.
// When checkpoint E commits, every event recorded with an epoch <= E is durable and may be
// acknowledged.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "loopguard/protocol.hpp"
#include "state/idle_tracker.hpp"
#include "state/sequence_ledger.hpp"
#include "state/shared_economics_state.hpp"
#include "store/checkpoint_store.hpp"
#include "store/event_log.hpp"
#include "store/swarm_export.hpp"

namespace loopguard::daemon {

struct ingest_result {
  std::vector<protocol::verdict> verdicts;  // to push to the swarm (outside any lock)
  std::uint64_t epoch = 0;                  // acknowledge `last_seq` once this epoch is durable
  std::uint64_t last_seq = 0;               // highest sequence number now applied for the worker
  std::size_t applied = 0;                  // events counted
  std::size_t duplicates = 0;               // events already counted before (resent)
  status error;  // failed (code sequence_gap): the batch stopped at an undeclared gap
};

// What a retention sweep expired (swarm_service::sweep).
struct retention_report {
  std::size_t incarnations = 0;  // sequence rows dropped
  std::size_t swarms = 0;        // swarms turned into tombstones
  std::size_t forgotten = 0;     // expired-incarnation records dropped after expired_kept
  bool empty() const { return incarnations == 0 && swarms == 0 && forgotten == 0; }
};

// A compaction in chunks begins (group_committer): a group commit whose log record (marked:
// checkpoint::log_mark) is the last one `rows` cover, and the rows changed since the last
// compaction, both taken in one hold of the state's lock.
struct staged_take {
  checkpoint commit;
  state_changes rows;
};

class swarm_service {
 public:
  // The daemon's wall clock, Unix seconds (retention only; detection runs on event time).
  using wall_clock = std::function<double()>;
  static double system_wall_clock();

  explicit swarm_service(swarm_rules rules = {}, state_options options = {},
                         wall_clock clock = system_wall_clock);

  // Replaces everything with what `store` holds: its rows, read and decoded on a second thread
  // while this one inserts them, then every log record replayed in order. Call before
  // any session exists. Stored strings that are not valid UTF-8 are repaired (utf8::repair).
  // An error (the store cannot be loaded, or its log cannot be replayed) leaves the state
  // empty: the store is refused. A restore never writes to the store.
  struct restore_report {
    std::size_t fingerprints = 0, workers = 0, sequences = 0, records = 0;
    std::size_t repaired = 0;  // stored strings that were not valid UTF-8, now repaired
    std::size_t expired = 0;   // expired incarnations remembered
  };
  result<restore_report> restore_from(checkpoint_store& store);
  // Rows per batch handed from the loading thread to the restoring one.
  static constexpr std::size_t kRestoreBatchRows = 4096;

  // Applies a batch in order. An event at or below the last applied sequence number is a
  // duplicate and skipped; one beyond the next expected number stops the batch with a
  // sequence_gap error (events before it stay applied).
  ingest_result ingest(const worker_identity& id, const std::vector<protocol::event>& batch);

  // A declared gap: the epoch to wait for before acknowledging up to `to`, or why the gap is
  // refused (code protocol::codes::bad_gap).
  result<std::uint64_t> declare_gap(const worker_identity& id, std::uint64_t from,
                                    std::uint64_t to);

  // Forgets `swarm`: the epoch whose checkpoint holds the completion, or an error when there is
  // nothing to forget (no state of that swarm: unknown, or already completed).
  result<std::uint64_t> complete(std::string_view swarm);
  std::uint64_t durable_seq(const worker_identity& id) const;

  // Retention (docs/operations.md, "Retention"). A hello of `id`: refused (code
  // protocol::codes::incarnation_expired) when the daemon expired it; else `id` counts as
  // connected (never expired) until detach().
  status attach(const worker_identity& id);
  void detach(const worker_identity& id);
  // A connected incarnation said something that is neither events nor a gap (a heartbeat, a
  // detection report): it is active, and its last activity is written as for events, so that
  // a restart after a crash does not take a silent but connected worker for an idle one.
  void touch(const worker_identity& id);
  // Expires every incarnation and swarm idle for its limit by the wall clock: an incarnation's
  // sequence row is dropped and its id remembered (refused at its next hello); a swarm becomes
  // a tombstone (shared_economics_state::expire). Written by the next checkpoint.
  retention_report sweep(const retention_limits& limits);
  retention_gauges retention() const;

  // For the checkpointer: the log record and sequence numbers since the last call, with its
  // epoch; with `compact`, the rows changed since the last compaction instead of the record.
  checkpoint take_checkpoint(bool compact = false);
  // For a compaction in chunks: a log-append checkpoint, plus the change set that covers every
  // operation up to and including its record (docs/storage.md, "Compaction in chunks").
  staged_take take_staged_checkpoint();
  // Before that, in bounded holds of the lock: up to `limit` changed rows (and the completions
  // since the last call), shared_economics_state::take_changes_part.
  state_changes take_rows(std::size_t limit);
  // Log bytes written (or restored) since the last compaction was taken.
  std::size_t log_bytes() const;
  void mark_durable(const checkpoint& c);

  // Everything held of one swarm, normalized (swarm_export.hpp): its rows as a compaction would
  // write them (the log replayed into them), its incarnations' sequence numbers with their last
  // activity, its expired incarnations. nullopt when the state has no such swarm.
  std::optional<swarm_export> export_swarm(std::string_view swarm) const;

  // Every worker incarnation's last applied sequence number.
  std::vector<sequence_row> sequences() const;

  // Runs `f(const shared_economics_state&)` under the lock, for read-only views.
  template <class F>
  auto read(F&& f) const {
    std::lock_guard lock(mu_);
    return f(state_);
  }

 private:
  // restore_from's steps, under mu_: the fingerprint rows go into the state as the store reads
  // them (the result is the rest of what it holds), then the rest is restored and replayed.
  result<stored_state> stream_fingerprints(checkpoint_store& store, restore_report& r);
  status restore_stored(stored_state& stored, restore_report& r);

  mutable std::mutex mu_;  // guards everything below
  shared_economics_state state_;
  sequence_ledger ledger_;
  idle_tracker idle_;
  wall_clock clock_;
  event_log_writer log_;
  std::size_t log_bytes_ = 0;  // since the last compaction, the pending record excluded
  std::uint64_t epoch_ = 1;
};

}  // namespace loopguard::daemon
