#include "service/daemon_metrics.hpp"

#include <algorithm>
#include <cstdio>

namespace loopguard::daemon {

void latency_histogram::observe(double seconds) {
  std::size_t i = 0;
  while (i < kBuckets.size() && seconds > kBuckets[i]) ++i;
  ++counts[i];
  sum_ns += static_cast<std::uint64_t>(std::max(0.0, seconds) * 1e9);
}

void latency_histogram::render(std::string& out, const char* name, const char* help) const {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
  std::uint64_t cumulative = 0;
  char le[32];
  for (std::size_t i = 0; i <= kBuckets.size(); ++i) {
    cumulative += counts[i].load();
    if (i < kBuckets.size()) {
      std::snprintf(le, sizeof le, "%g", kBuckets[i]);
    } else {
      std::snprintf(le, sizeof le, "+Inf");
    }
    out += std::string(name) + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  char sum[64];
  std::snprintf(sum, sizeof sum, "%.9f", static_cast<double>(sum_ns.load()) / 1e9);
  out += std::string(name) + "_sum " + sum + "\n";
  out += std::string(name) + "_count " + std::to_string(cumulative) + "\n";
}

void durability::ok() {
  std::lock_guard lock(mu_);
  reason_.clear();
}

void durability::failing(std::string reason) {
  std::lock_guard lock(mu_);
  reason_ = reason.empty() ? "checkpoint failed" : std::move(reason);
}

std::string durability::failure() const {
  std::lock_guard lock(mu_);
  return reason_;
}

void daemon_metrics::observe_checkpoint(double seconds, std::uint64_t rows) {
  checkpoint_latency.observe(seconds);
  ++checkpoints;
  checkpoint_rows += rows;
}

namespace {

template <class T>
void metric(std::string& out, const char* name, const char* type, const char* help, T value) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
         name + " " + std::to_string(value) + "\n";
}

}  // namespace

void daemon_metrics::render_connections(std::string& out) const {
  metric(out, "loopguard_events_total", "counter", "Events applied to the swarm state.",
         events_applied.load());
  metric(out, "loopguard_events_duplicate_total", "counter",
         "Resent events skipped because they were already counted.", events_duplicate.load());
  metric(out, "loopguard_batches_total", "counter", "Event batches received.", batches.load());
  metric(out, "loopguard_gaps_total", "counter", "Gap messages: ranges of events a worker dropped.",
         gaps.load());
  metric(out, "loopguard_events_lost_total", "counter", "Events declared lost by gap messages.",
         events_lost.load());
  metric(out, "loopguard_connections_total", "counter", "Connections accepted.",
         connections_total.load());
  metric(out, "loopguard_connections_open", "gauge", "Connections open now.",
         connections_open.load());
  metric(out, "loopguard_connections_refused_total", "counter",
         "Connections refused for the connection limit.", connections_refused.load());
  metric(out, "loopguard_closes_forced_total", "counter",
         "Connections torn down because their close did not complete in time.",
         closes_forced.load());
  metric(out, "loopguard_accept_pauses_total", "counter",
         "Times accepting paused because the process ran out of file descriptors.",
         accept_pauses.load());
  metric(out, "loopguard_tls_handshake_failures_total", "counter",
         "TLS handshakes that failed or timed out (a plaintext client, an untrusted or slow one).",
         tls_handshake_failures.load());
  metric(out, "loopguard_rate_limited_total", "counter",
         "Times a connection over its event rate was not read for a while (back-pressure).",
         read_pauses.load());
  char paused[32];
  std::snprintf(paused, sizeof paused, "%.6f", static_cast<double>(read_paused_us.load()) / 1e6);
  out += std::string("# HELP loopguard_rate_limited_seconds_total Time connections over their ") +
         "event rate were not read.\n# TYPE loopguard_rate_limited_seconds_total counter\n" +
         "loopguard_rate_limited_seconds_total " + paused + "\n";
  metric(out, "loopguard_errors_sent_total", "counter", "Error messages sent to workers.",
         errors_sent.load());
  metric(out, "loopguard_local_detections_total", "counter",
         "Local detections workers reported (informational, not counted).",
         detections_reported.load());
}

void daemon_metrics::render_state(std::string& out, const state_counters& state) const {
  metric(out, "loopguard_verdicts_total", "counter", "Global verdicts declared.", state.verdicts);
  metric(out, "loopguard_verdicts_lifted_total", "counter",
         "Global verdicts lifted: their counted calls fell below their level.", state.lifted);
  metric(out, "loopguard_verdict_messages_total", "counter", "Verdict messages queued to workers.",
         verdicts_pushed.load());
  metric(out, "loopguard_swarms_completed_total", "counter", "swarm_complete messages applied.",
         swarms_completed.load());
  metric(out, "loopguard_fingerprints", "gauge", "Fingerprints held, all swarms.",
         state.fingerprints);
  metric(out, "loopguard_evictions_total", "counter",
         "Fingerprints evicted for the per-swarm fingerprint cap.", state.evictions);
}

void daemon_metrics::render_checkpoints(std::string& out) const {
  metric(out, "loopguard_checkpoints_total", "counter", "Checkpoints committed.",
         checkpoints.load());
  metric(out, "loopguard_checkpoint_failures_total", "counter", "Checkpoints that failed.",
         checkpoint_failures.load());
  metric(out, "loopguard_checkpoint_rows_total", "counter", "Rows written by checkpoints.",
         checkpoint_rows.load());
  metric(out, "loopguard_compactions_total", "counter",
         "Checkpoints that wrote the changed rows and truncated the log.", compactions.load());
  metric(out, "loopguard_compaction_step_failures_total", "counter",
         "Compaction steps that failed (each is retried; no ack waits).",
         compaction_step_failures.load());
  checkpoint_latency.render(out, "loopguard_checkpoint_seconds",
                            "Time to write and commit one checkpoint.");
  ack_latency.render(out, "loopguard_ack_latency_seconds",
                     "Time from a batch's arrival to its acknowledgement (durable).");
  metric(out, "loopguard_durable", "gauge",
         "1 when the latest checkpoint committed (events can be made durable), else 0.",
         durable.failure().empty() ? 1 : 0);
}

namespace {

// A label value of the text format: backslash, double quote and newline escaped.
std::string label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

// One series per swarm held (a completed swarm's series end with it).
void daemon_metrics::render_costs(std::string& out, const std::vector<swarm_summary>& swarms) {
  struct family {
    const char* name;
    const char* help;
    bool tokens;
    bool wasted;
  };
  static constexpr family kFamilies[] = {
      {"loopguard_swarm_tokens_total", "Tokens the swarm's workers reported.", true, false},
      {"loopguard_swarm_cost_total", "Cost the swarm's workers reported, in the swarm's unit.",
       false, false},
      {"loopguard_swarm_wasted_tokens_total",
       "Tokens burned on global dead ends (their calls without progress).", true, true},
      {"loopguard_swarm_wasted_cost_total",
       "Cost burned on global dead ends (their calls without progress), in the swarm's unit.",
       false, true},
  };
  for (const family& f : kFamilies) {
    out += std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " counter\n";
    for (const auto& s : swarms) {
      const protocol::cost& c = f.wasted ? s.wasted : s.spent;
      out += std::string(f.name) + "{swarm=\"" + label_value(s.swarm) + "\"";
      if (!f.tokens) out += ",unit=\"" + label_value(s.unit) + "\"";
      out += "} " + (f.tokens ? std::to_string(c.tokens) : number(c.amount)) + "\n";
    }
  }
}

void daemon_metrics::render_retention(std::string& out, const state_counters& state,
                                      const retention_gauges& retention) const {
  metric(out, "loopguard_incarnations_expired_total", "counter",
         "Idle worker incarnations expired (their sequence numbers dropped).",
         incarnations_expired.load());
  metric(out, "loopguard_swarms_expired_total", "counter",
         "Idle swarms expired into tombstones (spend kept).", swarms_expired.load());
  metric(out, "loopguard_expired_incarnations_forgotten_total", "counter",
         "Expired-incarnation records dropped after retention.expired_kept_s.",
         expired_forgotten.load());
  metric(out, "loopguard_incarnations", "gauge", "Worker incarnations with a sequence number held.",
         retention.incarnations);
  metric(out, "loopguard_expired_incarnations", "gauge",
         "Expired incarnations remembered (refused with incarnation_expired).", retention.expired);
  metric(out, "loopguard_swarms", "gauge", "Live swarms held.", state.swarms);
  metric(out, "loopguard_swarm_tombstones", "gauge", "Expired swarms held as tombstones.",
         state.tombstones);
}

std::string daemon_metrics::render(const state_counters& state,
                                   const std::vector<swarm_summary>& swarms,
                                   const retention_gauges& retention) const {
  std::string out;
  render_connections(out);
  render_state(out, state);
  render_checkpoints(out);
  render_retention(out, state, retention);
  render_costs(out, swarms);
  return out;
}

}  // namespace loopguard::daemon
