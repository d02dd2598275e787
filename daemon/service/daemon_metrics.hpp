// Counters of one loopguardd process, rendered in the Prometheus text format at GET /metrics
// (docs/operations.md, "Metrics"). Lock-free: every field is an atomic any thread may bump.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "state/idle_tracker.hpp"
#include "state/shared_economics_state.hpp"

namespace loopguard::daemon {

// A Prometheus histogram of seconds with fixed buckets, lock-free.
struct latency_histogram {
  static constexpr std::array<double, 14> kBuckets{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                   0.1,    0.2,   0.5,   1.0,   2.0,  5.0,  10.0};
  std::array<std::atomic<std::uint64_t>, kBuckets.size() + 1> counts{};  // the last: +Inf
  std::atomic<std::uint64_t> sum_ns{0};

  void observe(double seconds);
  // HELP, TYPE, the cumulative buckets, _sum and _count of the family `name`.
  void render(std::string& out, const char* name, const char* help) const;
};

// Whether the daemon can make events durable: the outcome of the latest checkpoint (GET /readyz).
class durability {
 public:
  void ok();
  void failing(std::string reason);
  // Empty when the latest checkpoint committed (or none was tried); else why it failed.
  std::string failure() const;

 private:
  mutable std::mutex mu_;  // guards reason_
  std::string reason_;
};

struct daemon_metrics {
  std::atomic<std::uint64_t> events_applied{0};
  std::atomic<std::uint64_t> events_duplicate{0};
  std::atomic<std::uint64_t> batches{0};
  std::atomic<std::uint64_t> gaps{0};
  std::atomic<std::uint64_t> events_lost{0};  // declared by gap messages
  std::atomic<std::uint64_t> connections_total{0};
  std::atomic<std::int64_t> connections_open{0};
  std::atomic<std::uint64_t> connections_refused{0};
  std::atomic<std::uint64_t> closes_forced{0};           // closes that missed their deadline
  std::atomic<std::uint64_t> accept_pauses{0};           // accepting paused: out of descriptors
  std::atomic<std::uint64_t> tls_handshake_failures{0};  // failed or timed out (--tls-cert)
  std::atomic<std::uint64_t> read_pauses{0};             // a connection over its event rate waited
  std::atomic<std::uint64_t> read_paused_us{0};          // how long, in all
  std::atomic<std::uint64_t> verdicts_pushed{0};         // messages queued to workers
  std::atomic<std::uint64_t> errors_sent{0};
  std::atomic<std::uint64_t> swarms_completed{0};
  std::atomic<std::uint64_t> detections_reported{0};  // `detection` messages accepted
  std::atomic<std::uint64_t> checkpoints{0};
  std::atomic<std::uint64_t> checkpoint_failures{0};
  std::atomic<std::uint64_t> checkpoint_rows{0};
  std::atomic<std::uint64_t> compactions{0};
  std::atomic<std::uint64_t> compaction_step_failures{0};  // the rows file's (retried)
  std::atomic<std::uint64_t> incarnations_expired{0};      // retention sweeps
  std::atomic<std::uint64_t> swarms_expired{0};
  std::atomic<std::uint64_t> expired_forgotten{0};
  latency_histogram checkpoint_latency;  // write and commit of one checkpoint
  latency_histogram ack_latency;         // a batch's arrival to its ack being queued
  durability durable;

  void observe_checkpoint(double seconds, std::uint64_t rows);
  void durable_ok() { durable.ok(); }
  void durable_failing(std::string reason) { durable.failing(std::move(reason)); }
  // The text exposition; `state` supplies the evictions and fingerprint gauges, `swarms` the
  // per-swarm cost counters.
  // `retention` the incarnation gauges.
  std::string render(const state_counters& state, const std::vector<swarm_summary>& swarms,
                     const retention_gauges& retention = {}) const;

 private:
  void render_connections(std::string& out) const;
  void render_state(std::string& out, const state_counters& state) const;
  void render_checkpoints(std::string& out) const;
  void render_retention(std::string& out, const state_counters& state,
                        const retention_gauges& retention) const;
  static void render_costs(std::string& out, const std::vector<swarm_summary>& swarms);
};

}  // namespace loopguard::daemon
