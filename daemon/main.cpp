// loopguardd: the swarm-wide doom-loop daemon (docs/operations.md).
// Order matters: open and restore the store, then listen, then accept; on SIGTERM/SIGINT stop
// accepting, close the sessions, join the I/O threads, write the last checkpoint, exit 0.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "loopguard/utf8.hpp"
#include "server/daemon_config.hpp"
#include "server/listener.hpp"
#include "service/checkpointer.hpp"
#include "store/sqlite_checkpoint_store.hpp"

namespace net = boost::asio;
using namespace loopguard::daemon;

namespace {

constexpr std::chrono::seconds kDrainTimeout{2};

std::optional<net::ip::tcp::endpoint> parse_listen(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  boost::system::error_code ec;
  auto host = s.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const auto addr = net::ip::make_address(host, ec);
  if (ec) return std::nullopt;
  unsigned long port = 0;
  try {
    port = std::stoul(s.substr(colon + 1));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (port > 65535) return std::nullopt;
  return net::ip::tcp::endpoint(addr, static_cast<unsigned short>(port));
}

// Written whole or not at all: a test polling for the file never reads half a port.
void write_port_file(const std::string& path, unsigned short port) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::filesystem::rename(tmp, path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loopguardd: swarm-wide doom-loop detection daemon"};
  app.set_version_flag("--version", std::string("loopguardd ") + LOOPGUARD_VERSION);
  std::string listen = "127.0.0.1:7070", db = "./loopguard.db", token_file, config_file, port_file;
  int threads = 2;
  long interval_ms = 0, idle_ms = 0, compact_log_mb = 64;
  bool no_quick_check = false;
  app.add_option("--listen", listen,
                 "address:port to listen on (loopback by default; port 0 picks one)");
  app.add_option("--db", db, "SQLite checkpoint file");
  app.add_option("--token-file", token_file, "file whose first line every hello must carry");
  app.add_option("--config", config_file, "JSON config: swarm rules, limits");
  app.add_option("--port-file", port_file, "write the bound port here once listening");
  app.add_option("--threads", threads, "I/O threads")->check(CLI::Range(1, 64));
  app.add_option("--checkpoint-interval", interval_ms, "group-commit interval in ms (default 50)")
      ->check(CLI::Range(1L, 60000L));
  app.add_option("--idle-timeout", idle_ms, "close a connection silent this many ms")
      ->check(CLI::Range(100L, 86400000L));
  app.add_option("--compact-log-mb", compact_log_mb,
                 "compact once the log holds this many MiB since the last compaction")
      ->check(CLI::Range(1L, 65536L));
  app.add_flag("--no-quick-check", no_quick_check, "skip PRAGMA quick_check when opening --db");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("loopguardd"));  // stdout: the port line
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  daemon_config config;
  if (!config_file.empty()) {
    auto loaded = load_config(config_file, config);
    if (!loaded) return spdlog::error("{}", loaded.error().message()), 2;
    config = *loaded;
  }
  if (interval_ms) config.checkpoint_interval = std::chrono::milliseconds(interval_ms);
  if (idle_ms) config.limits.idle_timeout = std::chrono::milliseconds(idle_ms);
  const auto endpoint = parse_listen(listen);
  if (!endpoint) return spdlog::error("--listen {}: expected address:port", listen), 2;

  // State first: nothing is accepted before the checkpoint is restored.
  // The time reported covers opening (and checking) the file, loading and replaying.
  const auto t0 = std::chrono::steady_clock::now();
  auto opened = sqlite_checkpoint_store::open(db, {!no_quick_check});
  if (!opened) return spdlog::error("{}", opened.error().message()), 1;
  auto& store = *opened;
  swarm_service service(config.rules);
  const auto restored = service.restore_from(*store);
  if (!restored) {
    return spdlog::error("refusing {}: {}; the file was not modified", db,
                         restored.error().message()),
           1;
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  spdlog::info(
      "restored {} fingerprints, {} workers, {} sequence numbers and {} log records from {} in "
      "{:.3f} s",
      restored->fingerprints, restored->workers, restored->sequences, restored->records, db,
      took.count());
  if (restored->repaired > 0) {
    spdlog::warn(
        "repaired {} stored names or texts that were not valid UTF-8 (invalid bytes are now "
        "U+FFFD; docs/operations.md, \"Hostile input\")",
        restored->repaired);
  }

  daemon_metrics metrics;
  auto ctx = std::make_shared<server_context>(service, metrics);
  ctx->limits = config.limits;
  if (!token_file.empty()) {
    auto token = load_token(token_file);
    if (!token) return spdlog::error("{}", token.error().message()), 2;
    ctx->token = *token;
  }
  checkpointer cp(
      service, *store, metrics, config.checkpoint_interval,
      [ctx](std::uint64_t epoch) { ctx->on_durable(epoch); },
      static_cast<std::size_t>(compact_log_mb) << 20);
  ctx->nudge_checkpoint = [&cp] { cp.nudge(); };

  net::io_context ioc(threads);
  auto lst = std::make_shared<listener>(ioc, ctx);
  if (auto e = lst->open(*endpoint)) return spdlog::error("{}", *e), 1;
  const auto bound = lst->local_endpoint();
  std::printf("loopguardd listening on %s:%u\n", bound.address().to_string().c_str(),
              static_cast<unsigned>(bound.port()));
  std::fflush(stdout);
  if (!port_file.empty()) write_port_file(port_file, bound.port());
  cp.start();
  lst->run();

  net::steady_timer drain(ioc);
  std::chrono::steady_clock::time_point drain_deadline;
  std::function<void()> drain_poll = [&] {
    if (metrics.connections_open == 0 || std::chrono::steady_clock::now() >= drain_deadline) {
      return ioc.stop();
    }
    drain.expires_after(std::chrono::milliseconds(10));
    drain.async_wait([&](const boost::system::error_code&) { drain_poll(); });
  };
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: stopping", sig);
    ctx->stopping = true;
    lst->stop();
    ctx->close_all();
    // Wait for the sessions to finish their close handshakes, at most kDrainTimeout.
    drain_deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    drain_poll();
  });

  // Handlers catch what they can throw; an exception that still reaches run() is logged and the
  // thread goes back to serving (Asio's documented pattern), so one bad handler never ends the
  // daemon for everyone else.
  const auto serve = [&ioc] {
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("internal error in a handler, the daemon goes on: {}",
                      loopguard::utf8::repair(e.what()));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(serve);
  serve();
  for (auto& t : pool) t.join();

  const bool ok = cp.stop();  // the final checkpoint
  if (!ok)
    return spdlog::error("the final checkpoint failed; unacknowledged events were not saved"), 1;
  spdlog::info("stopped cleanly");
  return 0;
}
