// loopguardd: the swarm-wide doom-loop daemon (docs/operations.md). main parses the flags and
// wires SIGTERM/SIGINT to daemon_server::request_stop; daemon_server owns the lifecycle.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#ifdef LOOPGUARD_DAEMON_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "loopguard/tls_stream.hpp"
#include "loopguard/utf8.hpp"
#include "server/daemon_config.hpp"
#include "server/daemon_server.hpp"
#include "server/move_commands.hpp"
#include "service/daemon_log.hpp"

namespace net = boost::asio;
using namespace loopguard::daemon;
namespace cluster = loopguard::cluster;
using loopguard::result;
using loopguard::status;
namespace utf8 = loopguard::utf8;

namespace {

// Written whole or not at all: a test polling for the file never reads half a port.
void write_port_file(const std::string& path, unsigned short port) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::filesystem::rename(tmp, path);
}

// Each flag is optional: a flag given overrides the environment, which overrides the config
// file, which overrides the defaults (docs/operations.md, "Configuration").
struct flags {
  std::string config_file, port_file;
  std::optional<std::string> listen, db, token_file, tokens_file, metrics_token_file,
      protocol_features, cluster_file, cluster_self;
  std::optional<std::string> tls_cert, tls_key;
  std::optional<std::string> log_level, log_format;
  std::optional<std::uint64_t> threads, compact_log_mb;
  std::optional<long> interval_ms, idle_ms;
  std::optional<std::uint64_t> incarnation_idle_s, swarm_idle_s;
  bool no_quick_check = false, print_config = false, print_haproxy_map = false;
  move_command move;  // the offline commands (docs/scaling.md, "Moving a swarm")
};

// The offline commands that move swarms between stopped daemons' files (docs/scaling.md).
void add_move_flags(CLI::App& app, move_command& m) {
  app.add_option("--export-swarm", m.export_swarm,
                 "write swarm ID's whole state from --db (a stopped daemon's) to --out, and exit");
  app.add_option("--out", m.out, "the file --export-swarm writes (never overwritten)");
  app.add_option("--import-swarm", m.import_file,
                 "add the swarm of an --export-swarm FILE to --db in one transaction, and exit "
                 "(refused when --db already counts that swarm)");
  app.add_option("--remove-exported", m.remove_file,
                 "delete the swarm of an --export-swarm FILE from --db, if --db still holds "
                 "exactly that state, and exit");
  app.add_option("--export-moved", m.export_moved,
                 "export every swarm of --db that --cluster gives another server than "
                 "--cluster-self to DIR/OWNER/, and exit");
}

void add_flags(CLI::App& app, flags& f) {
  app.set_version_flag("--version", std::string("loopguardd ") + LOOPGUARD_VERSION);
  app.add_option("--config", f.config_file,
                 "JSON config file (docs/operations.md); default: $LOOPGUARD_CONFIG");
  app.add_option("--listen", f.listen,
                 "address:port to listen on (default 127.0.0.1:7070; port 0 picks one)");
  app.add_option("--db", f.db, "SQLite checkpoint file (default ./loopguard.db)");
  app.add_option("--token-file", f.token_file,
                 "file whose first line is an admin token (every swarm, the HTTP API)");
  app.add_option("--tokens-file", f.tokens_file,
                 "file of tokens with their grants, one per line (docs/operations.md, Access)");
  app.add_option("--metrics-token-file", f.metrics_token_file,
                 "file whose first line /metrics needs as a bearer token (default: open)");
  app.add_option("--tls-cert", f.tls_cert,
                 "PEM certificate chain: with --tls-key the port serves only TLS (wss://, "
                 "https://)");
  app.add_option("--tls-key", f.tls_key, "PEM private key of --tls-cert");
  app.add_option("--cluster", f.cluster_file,
                 "cluster file (docs/scaling.md): refuse swarms the ring gives another daemon");
  app.add_option("--cluster-self", f.cluster_self, "this daemon's server name in --cluster");
  app.add_flag("--print-haproxy-map", f.print_haproxy_map,
               "print --cluster's bucket-to-backend map for HAProxy's map_int, and exit");
  add_move_flags(app, f.move);
  app.add_option("--port-file", f.port_file, "write the bound port here once listening");
  app.add_option("--threads", f.threads, "I/O threads (default 2)")->check(CLI::Range(1, 64));
  app.add_option("--checkpoint-interval", f.interval_ms,
                 "longest wait in ms for a commit no ack waits on (default 50)")
      ->check(CLI::Range(1L, 60000L));
  app.add_option("--idle-timeout", f.idle_ms, "close a connection silent this many ms")
      ->check(CLI::Range(100L, 86400000L));
  app.add_option("--compact-log-mb", f.compact_log_mb,
                 "compact once the log holds this many MiB since the last compaction")
      ->check(CLI::Range(1, 65536));
  app.add_option("--incarnation-idle", f.incarnation_idle_s,
                 "expire a worker incarnation idle this many seconds (default 604800, 7 days; "
                 "0: never)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{315360000}));
  app.add_option("--swarm-idle", f.swarm_idle_s,
                 "expire a swarm idle this many seconds into a tombstone keeping its spend "
                 "(default 2592000, 30 days; 0: never)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{315360000}));
  app.add_flag("--no-quick-check", f.no_quick_check, "skip PRAGMA quick_check when opening --db");
  app.add_option("--log-level", f.log_level,
                 "trace, debug, info (default), warn, error, critical or off");
  app.add_option("--log-format", f.log_format, "text (default) or json: one object per line");
  app.add_option("--protocol-features", f.protocol_features,
                 "features the welcome lists: all (default), none (the protocol v1 baseline), or "
                 "a comma-separated list; for testing version skew");
  app.add_flag("--print-config", f.print_config,
               "print the configuration the flags, environment and file make, and exit");
}

// The configuration: defaults, then the file, then LOOPGUARD_* variables, then the flags.
result<daemon_config> config_of(const flags& f) {
  std::string file = f.config_file;
  if (const char* env = std::getenv("LOOPGUARD_CONFIG"); file.empty() && env && *env) file = env;
  result<daemon_config> loaded =
      file.empty() ? result<daemon_config>(daemon_config{}) : load_config(file);
  if (!loaded) return loaded;
  daemon_config& c = *loaded;
  if (auto s = apply_env(c, [](const char* n) -> const char* { return std::getenv(n); }); !s.ok())
    return s;
  if (f.listen) {
    if (!parse_listen(*f.listen)) {
      return status::error("--listen " + *f.listen + ": expected address:port (an IP address)");
    }
    c.listen = *f.listen;
  }
  if (f.db) c.db = *f.db;
  if (f.token_file) c.token_file = *f.token_file;
  if (f.tokens_file) c.tokens_file = *f.tokens_file;
  if (f.metrics_token_file) c.metrics_token_file = *f.metrics_token_file;
  if (f.tls_cert) c.tls_cert = *f.tls_cert;
  if (f.tls_key) c.tls_key = *f.tls_key;
  if (f.cluster_file) c.cluster_file = *f.cluster_file;
  if (f.cluster_self) c.cluster_self = *f.cluster_self;
  if (f.threads) c.threads = *f.threads;
  if (f.compact_log_mb) c.compact_log_mb = *f.compact_log_mb;
  if (f.no_quick_check) c.quick_check = false;
  if (f.interval_ms) c.checkpoint_interval = std::chrono::milliseconds(*f.interval_ms);
  if (f.idle_ms) c.limits.idle_timeout = std::chrono::milliseconds(*f.idle_ms);
  if (f.incarnation_idle_s)
    c.retention.incarnation_idle = static_cast<double>(*f.incarnation_idle_s);
  if (f.swarm_idle_s) c.retention.swarm_idle = static_cast<double>(*f.swarm_idle_s);
  if (f.log_level) {
    if (auto l = logs::parse_level(*f.log_level); !l)
      return l.error().with_context("--log-level: ");
    c.log_level = *f.log_level;
  }
  if (f.log_format) {
    if (auto l = logs::parse_format(*f.log_format); !l) {
      return l.error().with_context("--log-format: ");
    }
    c.log_format = *f.log_format;
  }
  if (f.protocol_features) {
    auto features = parse_protocol_features(*f.protocol_features);
    if (!features) return features.error();
    c.protocol_features = std::move(*features);
  }
  return loaded;
}

// The cluster of cluster_file and cluster_self (both or neither).
result<std::optional<cluster::membership>> cluster_of(const daemon_config& c) {
  if (c.cluster_file.empty() && c.cluster_self.empty()) {
    return std::optional<cluster::membership>();
  }
  if (c.cluster_file.empty() || c.cluster_self.empty()) {
    return status::error(
        "cluster_file and cluster_self go together (--cluster FILE --cluster-self NAME)");
  }
  auto layout = cluster::load_ring(c.cluster_file);
  if (!layout) return layout.error();
  auto self = cluster::server_index(*layout, c.cluster_self);
  if (!self) return self.error().with_context(c.cluster_file + ": cluster_self: ");
  return std::optional<cluster::membership>(cluster::membership{std::move(*layout), *self});
}

// The daemon's options from the configuration and the files it names; an error exits 2.
result<daemon_options> options_of(daemon_config c) {
  daemon_options o;
  o.endpoint = *parse_listen(c.listen);
  auto tokens = load_tokens(c);
  if (!tokens) return tokens.error();
  o.tokens = std::move(*tokens);
  if (o.tokens.empty() && !o.endpoint.address().is_loopback()) {
    return status::error("listen " + c.listen +
                         ": without tokens the daemon serves loopback only (anyone who reaches "
                         "the port could act as any worker); give tokens_file or token_file to "
                         "listen on " +
                         o.endpoint.address().to_string());
  }
  if (!c.metrics_token_file.empty()) {
    auto token = load_token(c.metrics_token_file);
    if (!token) return token.error();
    o.metrics_token = std::move(*token);
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return status::error(c.tls_cert.empty() ? "--tls-key needs --tls-cert (tls.cert)"
                                            : "--tls-cert needs --tls-key (tls.key)");
  }
  if (!c.tls_cert.empty()) {
    auto tls = loopguard::tls::server_context(c.tls_cert, c.tls_key);
    if (!tls) return tls.error();
    o.tls = std::move(*tls);
  }
  auto membership = cluster_of(c);
  if (!membership) return membership.error();
  o.cluster = std::move(*membership);
  o.db = c.db;
  o.threads = static_cast<int>(c.threads);
  o.compact_log_bytes = static_cast<std::size_t>(c.compact_log_mb) << 20;
  o.quick_check = c.quick_check;
  o.config = std::move(c);
  return o;
}

// Warns when the TLS key file's mode lets others read it (loose_key_mode: not a refusal).
void warn_key_mode(const std::string& key) {
  if (const auto mode = loose_key_mode(key)) {
    logs::emit(spdlog::level::warn, "tls_key_mode",
               "--tls-key " + key + " may be read or written by other users (mode " + *mode +
                   "); make it the daemon user's alone: chmod 600 " + key,
               {{"file", key}, {"mode", *mode}});
  }
}

// Says which server of its cluster this daemon is, and warns when the cluster file gives that
// server another address than the one it listens on (the proxy would send its swarms elsewhere).
void log_cluster(const cluster::membership& m, const std::string& listen) {
  const auto& self = m.layout.servers[m.self];
  std::size_t owned = 0;
  for (const std::size_t o : cluster::bucket_owners(m.layout)) owned += o == m.self ? 1 : 0;
  logs::emit(spdlog::level::info, "cluster",
             "server " + self.name + " of " + std::to_string(m.layout.servers.size()) + ": owns " +
                 std::to_string(owned) + " of " + std::to_string(m.layout.buckets) +
                 " buckets; swarms of the others are refused with not_owner",
             {{"server", self.name}, {"buckets", std::to_string(owned)}});
  if (self.address != listen) {
    logs::emit(spdlog::level::warn, "cluster_address",
               "the cluster file gives " + self.name + " the address " + self.address +
                   ", but this daemon listens on " + listen +
                   ": the proxy forwards this server's swarms to the former",
               {{"server", self.name}, {"address", self.address}, {"listen", listen}});
  }
}

// Hands the pages the allocator holds free back to the system: after a restore, those of the
// rows decoded on the way (jemalloc would keep them until later allocations let it decay them,
// and a quiet daemon makes none). Nothing to do with another allocator.
void release_unused_memory() {
#ifdef LOOPGUARD_DAEMON_JEMALLOC
  static_assert(MALLCTL_ARENAS_ALL == 4096, "every arena: arena.<MALLCTL_ARENAS_ALL>.purge");
  mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
#endif
}

// Serves until SIGTERM/SIGINT has drained the daemon; the signals are waited for on a thread
// of their own, registered before the port is announced.
void serve_until_signalled(daemon_server& d, const std::string& port_file) {
  net::io_context signal_ioc(1);
  net::signal_set signals(signal_ioc, SIGINT, SIGTERM);
  signals.async_wait([&d](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    logs::emit(spdlog::level::info, "stopping", "signal " + std::to_string(sig) + ": stopping");
    d.request_stop();
  });
  std::thread signal_thread([&signal_ioc] { signal_ioc.run(); });
  const auto bound = d.local_endpoint();
  release_unused_memory();
  std::printf("loopguardd listening on %s:%u\n", bound.address().to_string().c_str(),
              static_cast<unsigned>(bound.port()));
  std::fflush(stdout);
  if (!port_file.empty()) write_port_file(port_file, bound.port());
  logs::emit(spdlog::level::info, "listening",
             std::string("serving workers, the API and the dashboard on ") +
                 (d.serves_tls() ? "https://" : "http://") + bound.address().to_string() + ":" +
                 std::to_string(bound.port()) + "/",
             {{"address", bound.address().to_string() + ":" + std::to_string(bound.port())},
              {"token", d.requires_token() ? "required" : "none"},
              {"tls", d.serves_tls() ? "on" : "off"}});
  if (!d.requires_token()) {
    logs::emit(spdlog::level::warn, "no_tokens",
               "no tokens configured: serving loopback only, and any local process may act as "
               "any worker of any swarm and read the API (give tokens_file to bind identities)");
  }
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
  auto config = config_of(f);
  if (!config) {
    std::fprintf(stderr, "loopguardd: %s\n", utf8::repair(config.error().message()).c_str());
    return 2;
  }
  if (f.print_config) {
    std::printf(
        "%s\n",
        to_json(*config).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  if (f.print_haproxy_map) {
    if (config->cluster_file.empty()) {
      std::fprintf(stderr, "loopguardd: --print-haproxy-map needs --cluster FILE\n");
      return 2;
    }
    auto layout = cluster::load_ring(config->cluster_file);
    if (!layout) {
      std::fprintf(stderr, "loopguardd: %s\n", utf8::repair(layout.error().message()).c_str());
      return 2;
    }
    std::fputs(cluster::haproxy_map(*layout).c_str(), stdout);
    return 0;
  }
  if (f.move.any()) return run_move_command(*config, f.move);
  // Logs go to stderr; stdout holds only the port line.
  logs::setup(*logs::parse_format(config->log_format), *logs::parse_level(config->log_level));
  auto options = options_of(std::move(*config));
  if (!options) return logs::emit(spdlog::level::err, "bad_config", options.error().message()), 2;
  if (options->cluster) log_cluster(*options->cluster, options->config.listen);
  if (!options->config.tls_key.empty()) warn_key_mode(options->config.tls_key);
  daemon_server d(std::move(*options));
  if (const auto s = d.open(); !s.ok()) {
    return logs::emit(spdlog::level::err, "open_failed", s.message()), 1;
  }
  serve_until_signalled(d, f.port_file);
  logs::flush_all_suppressed();
  if (const auto s = d.finish(); !s.ok()) {
    return logs::emit(spdlog::level::err, "final_checkpoint_failed", s.message()), 1;
  }
  logs::emit(spdlog::level::info, "stopped", "stopped cleanly");
  return 0;
}
