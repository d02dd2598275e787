#include "server/daemon_server.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <thread>
#include <vector>

#include "loopguard/utf8.hpp"
#include "server/fd_limit.hpp"
#include "server/listener.hpp"
#include "server/server_context.hpp"
#include "service/daemon_log.hpp"
#include "store/sqlite_checkpoint_store.hpp"

namespace loopguard::daemon {

namespace net = boost::asio;

state_options state_options_of(const daemon_config& c) {
  const auto& f = c.protocol_features;
  return {.lift_verdicts =
              std::find(f.begin(), f.end(), protocol::features::active_verdicts) != f.end()};
}

daemon_server::daemon_server(daemon_options options)
    : options_(std::move(options)),
      service_(options_.config.rules, state_options_of(options_.config)),
      ioc_(options_.threads),
      drain_timer_(ioc_),
      log_timer_(net::make_strand(ioc_)) {}

daemon_server::~daemon_server() {
  // Sessions still queued on the I/O context are destroyed with it and must not call back.
  if (ctx_) ctx_->on_drained = nullptr;
}

status daemon_server::open() {
  if (auto s = restore_state(); !s.ok()) return s;
  ctx_ = std::make_shared<server_context>(service_, metrics_);
  ctx_->limits = options_.config.limits;
  fit_connections_to_descriptors(ctx_->limits);
  ctx_->tls = options_.tls;
  ctx_->access.configure(options_.tokens, options_.metrics_token);
  ctx_->features = options_.config.protocol_features;
  ctx_->cluster = options_.cluster;
  ctx_->on_drained = [this] { ioc_.stop(); };
  checkpointer_ = std::make_unique<checkpointer>(
      service_, *store_, metrics_, options_.config.checkpoint_interval,
      [ctx = ctx_](std::uint64_t epoch) { ctx->on_durable(epoch); }, options_.compact_log_bytes);
  checkpointer_->retain(options_.config.retention, options_.config.sweep_interval);
  checkpointer_->sweep_now();
  ctx_->nudge_checkpoint = [cp = checkpointer_.get()] { cp->nudge(); };
  listener_ = std::make_shared<listener>(ioc_, ctx_);
  return listener_->open(options_.endpoint);
}

// State first: nothing is accepted before the checkpoint is restored. The time reported
// covers opening (and checking) the file, loading and replaying.
status daemon_server::restore_state() {
  const auto t0 = std::chrono::steady_clock::now();
  if (options_.db == ":memory:") {
    return status::error("--db :memory: would keep nothing across a restart; give a file");
  }
  auto opened = sqlite_checkpoint_store::open(options_.db, {options_.quick_check});
  if (!opened) return opened.error();
  store_ = std::move(*opened);
  if (const int from = store_->migrated_from(); from != 0) {
    logs::emit(spdlog::level::info, "migrated",
               "migrated " + options_.db + " from schema " + std::to_string(from) + " to " +
                   std::to_string(sqlite_checkpoint_store::kSchemaVersion) +
                   "; builds that read only older schemas refuse it now (docs/storage.md, "
                   "\"Migrations\")",
               {{"db", options_.db}});
  }
  const auto restored = service_.restore_from(*store_);
  if (!restored) {
    // The migration at open committed: say so rather than "not modified".
    const std::string left = store_->migrated_from() == 0
                                 ? "the file was not modified"
                                 : "the file was migrated to schema " +
                                       std::to_string(sqlite_checkpoint_store::kSchemaVersion) +
                                       " when opened, and not modified otherwise";
    return status::error("refusing " + options_.db + ": " + restored.error().message() + "; " +
                         left);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", took.count());
  logs::emit(spdlog::level::info, "restored",
             "restored " + std::to_string(restored->fingerprints) + " fingerprints, " +
                 std::to_string(restored->workers) + " workers, " +
                 std::to_string(restored->sequences) + " sequence numbers and " +
                 std::to_string(restored->records) + " log records in " + seconds + " s",
             {{"db", options_.db}, {"seconds", seconds}});
  if (restored->repaired > 0) {
    logs::emit(spdlog::level::warn, "repaired",
               "repaired " + std::to_string(restored->repaired) +
                   " stored names or texts that were not valid UTF-8 (invalid bytes are now "
                   "U+FFFD; docs/operations.md, \"Hostile input\")",
               {{"db", options_.db}});
  }
  return {};
}

void daemon_server::fit_connections_to_descriptors(server_limits& limits) {
  const fd_budget b = raise_fd_limit(limits.max_connections);
  if (b.soft > b.soft_before) {
    logs::emit(spdlog::level::info, "fd_limit",
               "raised the open-file limit from " + std::to_string(b.soft_before) + " to " +
                   std::to_string(b.soft) + " (the hard limit)",
               {{"soft", std::to_string(b.soft)}, {"hard", std::to_string(b.hard)}});
  }
  if (b.raise_failed) {
    logs::emit(spdlog::level::warn, "fd_limit",
               "could not raise the open-file limit " + std::to_string(b.soft) +
                   " towards the hard limit " + std::to_string(b.hard),
               {{"soft", std::to_string(b.soft)}, {"hard", std::to_string(b.hard)}});
  }
  if (b.max_connections < limits.max_connections) {
    logs::emit(spdlog::level::warn, "fd_limit",
               "lowered max_connections from " + std::to_string(limits.max_connections) + " to " +
                   std::to_string(b.max_connections) + " to fit the open-file limit " +
                   std::to_string(b.soft) + " (" + std::to_string(fd_budget::kReserved) +
                   " kept for the database, HTTP and dashboards); raise it with ulimit -n or "
                   "LimitNOFILE=",
               {{"max_connections", std::to_string(b.max_connections)},
                {"open_file_limit", std::to_string(b.soft)}});
    limits.max_connections = b.max_connections;
  }
}

net::ip::tcp::endpoint daemon_server::local_endpoint() const {
  return listener_->local_endpoint();
}

void daemon_server::run() {
  checkpointer_->start();
  listener_->run();
  flush_logs_every_second();
  std::vector<std::thread> pool;
  for (int i = 1; i < options_.threads; ++i) pool.emplace_back([this] { serve(); });
  serve();
  for (auto& t : pool) t.join();
}

// Handlers catch what they can throw; an exception that still reaches run() is logged and the
// thread goes back to serving (Asio's documented pattern), so one bad handler never ends the
// daemon for everyone else.
void daemon_server::serve() {
  for (;;) {
    try {
      ioc_.run();
      return;
    } catch (const std::exception& e) {
      logs::emit(spdlog::level::err, "internal_error",
                 "internal error in a handler, the daemon goes on", {{"error", e.what()}});
    }
  }
}

void daemon_server::flush_logs_every_second() {
  log_timer_.expires_after(std::chrono::seconds(1));
  log_timer_.async_wait([this](const boost::system::error_code& ec) {
    logs::flush_suppressed();
    if (!ec && !ctx_->stopping) flush_logs_every_second();
  });
}

void daemon_server::request_stop() {
  if (stop_requested_.exchange(true)) return;
  net::post(ioc_, [this] { begin_drain(); });
}

// The drain ends at the first of: the last session closed (server_context::on_drained, from
// the session's destructor on any I/O thread), or the drain timeout.
void daemon_server::begin_drain() {
  ctx_->stopping = true;
  net::post(log_timer_.get_executor(), [this] { log_timer_.cancel(); });  // on the timer's strand
  listener_->stop();
  ctx_->close_all();
  drain_timer_.expires_after(options_.drain_timeout);
  drain_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) ioc_.stop();
  });
  // Sessions that closed before `stopping` was set did not call back.
  if (metrics_.connections_open == 0) ioc_.stop();
}

status daemon_server::finish() {
  if (checkpointer_ && !checkpointer_->stop()) {  // the final checkpoint
    return status::error("the final checkpoint failed; unacknowledged events were not saved");
  }
  return {};
}

}  // namespace loopguard::daemon
