// loopguardd: the swarm-wide doom-loop daemon (docs/operations.md). main parses the flags and
// wires SIGTERM/SIGINT to daemon_server::request_stop; daemon_server owns the lifecycle.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "server/daemon_config.hpp"
#include "server/daemon_server.hpp"

namespace net = boost::asio;
using namespace loopguard::daemon;
using loopguard::result;
using loopguard::status;

namespace {

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

struct flags {
  std::string listen = "127.0.0.1:7070", db = "./loopguard.db", token_file, config_file, port_file;
  std::string protocol_features;
  int threads = 2;
  long interval_ms = 0, idle_ms = 0, compact_log_mb = 64;
  bool no_quick_check = false;
};

void add_flags(CLI::App& app, flags& f) {
  app.set_version_flag("--version", std::string("loopguardd ") + LOOPGUARD_VERSION);
  app.add_option("--listen", f.listen,
                 "address:port to listen on (loopback by default; port 0 picks one)");
  app.add_option("--db", f.db, "SQLite checkpoint file");
  app.add_option("--token-file", f.token_file, "file whose first line every hello must carry");
  app.add_option("--config", f.config_file, "JSON config: swarm rules, limits");
  app.add_option("--port-file", f.port_file, "write the bound port here once listening");
  app.add_option("--threads", f.threads, "I/O threads")->check(CLI::Range(1, 64));
  app.add_option("--checkpoint-interval", f.interval_ms,
                 "longest wait in ms for a commit no ack waits on (default 50)")
      ->check(CLI::Range(1L, 60000L));
  app.add_option("--idle-timeout", f.idle_ms, "close a connection silent this many ms")
      ->check(CLI::Range(100L, 86400000L));
  app.add_option("--compact-log-mb", f.compact_log_mb,
                 "compact once the log holds this many MiB since the last compaction")
      ->check(CLI::Range(1L, 65536L));
  app.add_flag("--no-quick-check", f.no_quick_check, "skip PRAGMA quick_check when opening --db");
  app.add_option("--protocol-features", f.protocol_features,
                 "features the welcome lists: all (default), none (the protocol v1 baseline), or "
                 "a comma-separated list; for testing version skew");
}

// The daemon's options from the flags and the files they name; an error exits 2.
result<daemon_options> options_of(const flags& f) {
  daemon_options o;
  if (!f.config_file.empty()) {
    auto config = load_config(f.config_file);
    if (!config) return config.error();
    o.config = std::move(*config);
  }
  if (f.interval_ms) o.config.checkpoint_interval = std::chrono::milliseconds(f.interval_ms);
  if (f.idle_ms) o.config.limits.idle_timeout = std::chrono::milliseconds(f.idle_ms);
  if (!f.protocol_features.empty()) {
    auto features = parse_protocol_features(f.protocol_features);
    if (!features) return features.error();
    o.config.protocol_features = std::move(*features);
  }
  const auto endpoint = parse_listen(f.listen);
  if (!endpoint) return status::error("--listen " + f.listen + ": expected address:port");
  o.endpoint = *endpoint;
  if (!f.token_file.empty()) {
    auto token = load_token(f.token_file);
    if (!token) return token.error();
    o.token = std::move(*token);
  }
  o.db = f.db;
  o.threads = f.threads;
  o.compact_log_bytes = static_cast<std::size_t>(f.compact_log_mb) << 20;
  o.quick_check = !f.no_quick_check;
  return o;
}

// Serves until SIGTERM/SIGINT has drained the daemon; the signals are waited for on a thread
// of their own, registered before the port is announced.
void serve_until_signalled(daemon_server& d, const std::string& port_file) {
  net::io_context signal_ioc(1);
  net::signal_set signals(signal_ioc, SIGINT, SIGTERM);
  signals.async_wait([&d](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: stopping", sig);
    d.request_stop();
  });
  std::thread signal_thread([&signal_ioc] { signal_ioc.run(); });
  const auto bound = d.local_endpoint();
  std::printf("loopguardd listening on %s:%u\n", bound.address().to_string().c_str(),
              static_cast<unsigned>(bound.port()));
  std::fflush(stdout);
  if (!port_file.empty()) write_port_file(port_file, bound.port());
  d.run();
  signal_ioc.stop();
  signal_thread.join();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loopguardd: swarm-wide doom-loop detection daemon"};
  flags f;
  add_flags(app, f);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end parsing with success; any other is a bad flag: exit 2, as
    // documented (docs/operations.md), not CLI11's own codes.
    return app.exit(e) == 0 ? 0 : 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("loopguardd"));  // stdout: the port line
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  auto options = options_of(f);
  if (!options) return spdlog::error("{}", options.error().message()), 2;
  daemon_server d(std::move(*options));
  if (const auto s = d.open(); !s.ok()) return spdlog::error("{}", s.message()), 1;
  serve_until_signalled(d, f.port_file);
  if (const auto s = d.finish(); !s.ok()) return spdlog::error("{}", s.message()), 1;
  spdlog::info("stopped cleanly");
  return 0;
}
