// loopguardd's configuration: the --config JSON file (docs/operations.md, "Config file").
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "loopguard/status.hpp"
#include "server/server_context.hpp"
#include "server/token_table.hpp"
#include "state/idle_tracker.hpp"
#include "state/swarm_rules.hpp"

namespace loopguard::daemon {

// Every protocol feature this daemon can offer, in the order its welcome lists them
// (docs/protocol.md, "Versioning").
inline constexpr std::array<std::string_view, 7> kProtocolFeatures{
    protocol::features::detections, protocol::features::active_verdicts,
    protocol::features::error_seq,  protocol::features::swarm_url,
    protocol::features::observe,    protocol::features::cost,
    protocol::features::handoff};

std::vector<std::string> all_protocol_features();

// `ADDRESS:PORT` (IPv6 in brackets: `[::1]:7070`), or nullopt.
std::optional<boost::asio::ip::tcp::endpoint> parse_listen(std::string_view text);

struct daemon_config {
  static constexpr std::chrono::milliseconds kCheckpointInterval{50};
  // The process: where it listens and keeps its state, how it logs, its secrets' files.
  std::string listen = "127.0.0.1:7070";  // address:port; port 0 picks one
  std::string db = "./loopguard.db";
  std::uint64_t threads = 2;
  std::string token_file;          // one admin token; empty: none
  std::string tokens_file;         // tokens with their grants (token_table.hpp); empty: none
  std::string metrics_token_file;  // empty: /metrics is open
  // tls.cert / tls.key: PEM files; both set: the port serves only TLS (wss://, https://).
  std::string tls_cert, tls_key;
  // A cluster (docs/scaling.md): the cluster file and this daemon's server name in it; a swarm
  // the ring gives another server is refused with not_owner. Both empty: no cluster.
  std::string cluster_file;
  std::string cluster_self;
  std::uint64_t compact_log_mb = 64;
  bool quick_check = true;
  std::string log_level = "info";   // daemon_log.hpp's levels
  std::string log_format = "text";  // text or json
  swarm_rules rules;
  server_limits limits;
  std::chrono::milliseconds checkpoint_interval = kCheckpointInterval;
  // Retention (docs/operations.md, "Retention"): idle times by the wall clock, and how often
  // the checkpointer looks for what is idle.
  static constexpr std::chrono::milliseconds kSweepInterval{60'000};
  retention_limits retention;
  std::chrono::milliseconds sweep_interval = kSweepInterval;
  // The features the welcome lists; the behaviour of each one not listed is off. For testing
  // version skew: none is the protocol v1 baseline (docs/operations.md).
  std::vector<std::string> protocol_features = all_protocol_features();
};

// A --protocol-features value: `all`, `none`, or feature names separated by commas, each known
// and listed once (`--protocol-features: unknown feature "x" (known: detections, ...)`).
result<std::vector<std::string>> parse_protocol_features(std::string_view list);

// Reads `path` over `base` (keys not given keep base's values), with json_fields.hpp's rules.
// An error names the file and the key (`FILE: limits.max_frame: expected an integer in ...`).
result<daemon_config> load_config(const std::string& path, daemon_config base = {});

// Applies the LOOPGUARD_* environment variables that are set (docs/operations.md,
// "Configuration"), each read as its config key is; `get` is getenv or a test's table. An error
// names the variable.
using env_lookup = const char* (*)(const char*);
status apply_env(daemon_config& c, env_lookup get);

// Every setting, as the config file would hold it (--print-config).
nlohmann::json to_json(const daemon_config& c);

// A file that holds secrets, whole (at most 1 MiB): an error if unreadable, or readable or
// writable by its group or others (a secret must be the owner's alone).
result<std::string> read_secret_file(const std::string& path);
// The mode of the TLS key file at `path` when others may read it or its group or others may
// write it (a warning, not a refusal: 0640 root:ssl-cert is Debian's convention for keys);
// nullopt when neither.
std::optional<std::string> loose_key_mode(const std::string& path);
// A token file (read_secret_file's rules): its first line, surrounding whitespace removed.
result<std::string> load_token(const std::string& path);
// Every token the daemon accepts: tokens_file's grants and token_file's admin token (empty when
// neither is set). Errors name the file and line.
result<token_table> load_tokens(const daemon_config& c);

}  // namespace loopguard::daemon
