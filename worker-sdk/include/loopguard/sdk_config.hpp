// The SDK's config file (docs/configuration.md, "The SDK's config file"): the detector
// configuration document (parse_config) plus an optional "daemon" object holding the daemon
// client's options (client_options), read with json_fields.hpp's rules:
//
//   {"preset": "balanced",
//    "daemon": {"url": "ws://127.0.0.1:7070", "token_file": "/run/secrets/loopguard",
//               "swarm": "build-42", "worker": "w1", "outbox": 10000, "heartbeat_ms": 10000}}
//
// The token is never in the file: "token_file" names a file whose first line is the token (as
// loopguardd's token_file). "ca_file" names the CA file for wss:// (client_options::ca_file).
// Then LOOPGUARD_DAEMON, LOOPGUARD_TOKEN, LOOPGUARD_SWARM, LOOPGUARD_WORKER and LOOPGUARD_CA_FILE
// override the file; LOOPGUARD_CONFIG names the file when the program gives none.
//
//   auto c = loopguard::resolve_sdk_config("");  // $LOOPGUARD_CONFIG, then the variables
//   if (!c) { std::cerr << c.error().message() << '\n'; return 2; }
//   loopguard::swarm_worker w(c->detector);
//   if (c->connects()) w.connect(c->client);
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "loopguard/config.hpp"
#include "loopguard/daemon_client.hpp"

namespace loopguard {

struct sdk_config {
  manager_config detector;  // the document without "daemon"
  client_options client;    // the "daemon" object over client_options' defaults, then the env
  bool has_daemon = false;  // the document has a "daemon" object
  std::string token_file;   // daemon.token_file as given; empty: none
  // Whether there is a daemon to connect to: a url from the file or LOOPGUARD_DAEMON.
  bool connects() const { return !client.url.empty(); }
};

// Reads a parsed document: the detector configuration (parse_config's keys and rules) and the
// "daemon" object. Errors name the key path (`daemon.outbox: expected an integer in
// 1..10000000, got 0`, `daemon.outbox_size: unknown key, expected one of ...`). The token file
// is not read here (token_file is kept as given).
result<sdk_config> parse_sdk_config(const nlohmann::json& doc);

// Reads the file `path`, then the token from daemon.token_file (its first line, surrounding
// whitespace removed; a relative path is relative to the working directory, as loopguardd's).
// Errors name the file and the key: `sdk.json: daemon.token_file: cannot read /x: ...`.
result<sdk_config> load_sdk_config(const std::string& path);

// The variables over `c`, in this order: LOOPGUARD_DAEMON (daemon.url), LOOPGUARD_TOKEN,
// LOOPGUARD_SWARM (daemon.swarm), LOOPGUARD_WORKER (daemon.worker), LOOPGUARD_CA_FILE
// (daemon.ca_file), each read as its key is; an
// error names the variable (`LOOPGUARD_SWARM: daemon.swarm: expected ...`). `get` is getenv
// or a test's table.
using sdk_env_lookup = const char* (*)(const char*);
status apply_sdk_env(sdk_config& c, sdk_env_lookup get);

// What a program configures the SDK with: the file `path`, or when it is empty the file
// $LOOPGUARD_CONFIG names, or when neither the defaults (the balanced preset, no daemon); then
// apply_sdk_env.
result<sdk_config> resolve_sdk_config(const std::string& path, sdk_env_lookup get);
result<sdk_config> resolve_sdk_config(const std::string& path = {});

// The resolved configuration as JSON (`loopguard config --print-config`): to_json(detector)
// plus "daemon" with every client option (url, swarm, worker, incarnation, token_file, ca_file only
// when set); the token itself never shows: "token" is "<set>" when there is one and absent
// otherwise. Without the token, the output reads back (parse_sdk_config).
nlohmann::json to_json(const sdk_config& c);

}  // namespace loopguard
