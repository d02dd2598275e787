#include "service/checkpointer.hpp"

#include "service/daemon_log.hpp"

namespace loopguard::daemon {

checkpointer::checkpointer(swarm_service& service, checkpoint_store& store, daemon_metrics& metrics,
                           std::chrono::milliseconds interval, durable_fn on_durable,
                           std::size_t compact_log_bytes, std::size_t take_rows)
    : service_(service),
      store_(store),
      metrics_(metrics),
      interval_(interval),
      on_durable_(std::move(on_durable)),
      worker_([this] { nudge(); }),
      committer_(service, store, {.compact_log_bytes = compact_log_bytes, .take_rows = take_rows},
                 &worker_) {}

checkpointer::~checkpointer() {
  stop();
}

void checkpointer::retain(retention_limits limits, std::chrono::milliseconds every) {
  retention_ = limits;
  sweep_every_ = every;
}

void checkpointer::sweep_if_due() {
  if (!retention_) return;
  if (std::chrono::steady_clock::now() - last_sweep_ < sweep_every_) return;
  sweep_now();
}

void checkpointer::sweep_now() {
  if (!retention_) return;
  last_sweep_ = std::chrono::steady_clock::now();
  const retention_report r = service_.sweep(*retention_);
  metrics_.incarnations_expired += r.incarnations;
  metrics_.swarms_expired += r.swarms;
  metrics_.expired_forgotten += r.forgotten;
  if (r.empty()) return;
  logs::emit(spdlog::level::info, "retention",
             "expired " + std::to_string(r.incarnations) + " idle incarnations and " +
                 std::to_string(r.swarms) + " idle swarms (kept as tombstones); forgot " +
                 std::to_string(r.forgotten) + " expired incarnations",
             {{"incarnations", std::to_string(r.incarnations)},
              {"swarms", std::to_string(r.swarms)},
              {"forgotten", std::to_string(r.forgotten)}});
}

void checkpointer::start() {
  thread_ = std::thread([this] { run(); });
}

void checkpointer::nudge() {
  {
    std::lock_guard lock(mu_);
    nudged_ = true;
  }
  cv_.notify_one();
}

bool checkpointer::stop() {
  if (!thread_.joinable()) return last_ok_;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
  return last_ok_;
}

void checkpointer::run() {
  for (;;) {
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      // A compaction's next step in the main file is written at once (each is bounded); the
      // rows worker nudges when it has finished a job.
      const auto wait = committer_.main_step_pending() ? std::chrono::milliseconds(0) : interval_;
      cv_.wait_for(lock, wait, [&] { return stop_ || nudged_; });
      nudged_ = false;
      stopping = stop_;
    }
    if (!stopping) sweep_if_due();
    last_ok_ = checkpoint_once(stopping);
    if (stopping) return;
    if (!last_ok_) {
      // Back off a little so a full disk is not hammered; acks wait meanwhile.
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, interval_ * 4, [&] { return stop_; });
    }
  }
}

bool checkpointer::checkpoint_once(bool final) {
  const auto t0 = std::chrono::steady_clock::now();
  const group_committer::outcome o = committer_.commit_once(final);
  if (o.began_rows) {
    logs::emit(spdlog::level::info, "compaction_began",
               "compaction began: " + std::to_string(*o.began_rows) +
                   " changed fingerprints taken in parts (the last part, with the log record "
                   "it covers, held the state lock " +
                   std::to_string(o.take_seconds * 1e3) +
                   " ms); written in chunks beside the group commits",
               {{"rows", std::to_string(*o.began_rows)},
                {"take_ms", std::to_string(o.take_seconds * 1e3)}});
  }
  if (!o.compaction_error.ok()) {
    ++metrics_.compaction_step_failures;
    logs::emit(spdlog::level::err, "compaction_step_failed",
               "a compaction step failed; it is retried (acks do not wait for it; check the "
               "disk holding the database)",
               {{"error", o.compaction_error.message()}});
  }
  if (!o.result.ok()) {
    ++metrics_.checkpoint_failures;
    metrics_.durable_failing(o.result.message());
    logs::emit(spdlog::level::err, "checkpoint_failed",
               "checkpoint failed; acks wait and the daemon retries (check the disk holding "
               "the database)",
               {{"error", o.result.message()}});
    return false;
  }
  if (o.wrote) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    metrics_.durable_ok();
    metrics_.observe_checkpoint(took.count(), o.rows);
    if (o.compacted) {
      ++metrics_.compactions;
      if (!final) {
        logs::emit(spdlog::level::info, "compaction_current",
                   "compaction current after " + std::to_string(o.compaction_commits) +
                       " group commits; its staged rows are folded next",
                   {{"commits", std::to_string(o.compaction_commits)}});
      }
    }
  }
  if (on_durable_) on_durable_(o.epoch);
  return true;
}

}  // namespace loopguard::daemon
