// Group commit: one thread that takes the log record and sequence numbers from the
// swarm_service, writes them to the store as one transaction, and reports the epoch that became
// durable. It commits as soon as there is work waiting for an ack (a session calls nudge())
// and the previous commit has finished, so at low load a batch gets its own commit and under
// load every batch that arrived during one commit shares the next; `interval` only bounds the
// wait when nothing nudges (work no ack waits for). Once the log holds `compact_log_bytes`
// since the last compaction it compacts beside the group commits (group_committer: the rows go
// to the rows file on a worker thread of their own, so acks never wait for them), and the final
// checkpoint is one whole compaction (docs/storage.md). A failed checkpoint is kept and
// retried with the next one; nothing is acknowledged until it commits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "service/daemon_metrics.hpp"
#include "service/group_committer.hpp"
#include "service/rows_worker.hpp"
#include "service/swarm_service.hpp"
#include "store/checkpoint_store.hpp"

namespace loopguard::daemon {

class checkpointer {
 public:
  static constexpr std::size_t kCompactLogBytes = std::size_t{64} << 20;

  // Called on the checkpointer thread after each commit; must not block for long.
  using durable_fn = std::function<void(std::uint64_t epoch)>;

  checkpointer(swarm_service& service, checkpoint_store& store, daemon_metrics& metrics,
               std::chrono::milliseconds interval, durable_fn on_durable,
               std::size_t compact_log_bytes = kCompactLogBytes,
               std::size_t take_rows = group_committer::kTakeRows);
  ~checkpointer();
  checkpointer(const checkpointer&) = delete;
  checkpointer& operator=(const checkpointer&) = delete;

  // Retention (docs/operations.md): every `every`, before a checkpoint, expire what is idle
  // (swarm_service::sweep) so the checkpoint writes it. Call before start(); off until called.
  void retain(retention_limits limits, std::chrono::milliseconds every);
  // One sweep now (the daemon runs one at start, before it accepts anything, so what idled
  // while it was down is expired before its worker can say hello). Not concurrent with start().
  void sweep_now();

  void start();
  // Asks for a checkpoint as soon as the one in progress (if any) has finished: an ack is
  // waiting. Thread-safe; cheap enough to call for every batch.
  void nudge();
  // Stops the thread after one last checkpoint; true when everything was committed.
  bool stop();

 private:
  void run();
  bool checkpoint_once(bool final);  // true: committed (or nothing to write)
  void sweep_if_due();               // on the thread: sweep_now() every `sweep_every_`

  swarm_service& service_;
  checkpoint_store& store_;
  daemon_metrics& metrics_;
  std::chrono::milliseconds interval_;
  durable_fn on_durable_;
  std::mutex mu_;  // guards stop_ and nudged_
  std::condition_variable cv_;
  // Before the committer, which uses it; stopped after the final checkpoint waited for it.
  thread_rows_worker worker_;
  group_committer committer_;  // used on the thread only
  bool stop_ = false;
  bool nudged_ = false;
  bool last_ok_ = true;
  std::optional<retention_limits> retention_;  // set by retain()
  std::chrono::milliseconds sweep_every_{0};
  std::chrono::steady_clock::time_point last_sweep_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace loopguard::daemon
