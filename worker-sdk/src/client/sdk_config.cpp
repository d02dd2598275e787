// The SDK's config file: the detector configuration plus the "daemon" object.
#include "loopguard/sdk_config.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "client/daemon_url.hpp"
#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t kMaxOutbox = 10000000;
constexpr std::uint64_t kMaxDelayMs = 86400000;  // a day, as loopguardd's idle_timeout_ms
constexpr std::size_t kMaxPathBytes = 4096;

// An identifier key (swarm, worker, incarnation): 1..128 bytes of valid UTF-8.
void read_name(json_fields::object& x, std::string_view key, std::string& out) {
  std::string v;
  if (!x.identifier(key, v, protocol::kMaxNameBytes)) return;
  if (v.empty()) {
    return x.fail(key, "1.." + std::to_string(protocol::kMaxNameBytes) + " bytes", json(v));
  }
  out = std::move(v);
}

void read_ms(json_fields::object& x, std::string_view key, std::chrono::milliseconds& out,
             std::uint64_t lo) {
  auto ms = static_cast<std::uint64_t>(out.count());
  if (x.integer(key, ms, lo, kMaxDelayMs)) out = std::chrono::milliseconds(ms);
}

// The "daemon" object over `c`; every key is optional (absent keys keep c's values).
status read_daemon(const json& d, sdk_config& c) {
  json_fields::reader r(d, {.name = "daemon", .prefix = "daemon"});
  client_options& o = c.client;
  std::string url;
  if (r.string("url", url, kMaxPathBytes)) {
    if (auto u = client::parse_daemon_url(url); !u) {
      r.fail("url", "ws:// or wss://HOST:PORT[/PATH] (" + u.error().message() + ")", json(url));
    } else {
      o.url = std::move(url);
    }
  }
  r.string("token_file", c.token_file, kMaxPathBytes);
  r.string("ca_file", o.ca_file, kMaxPathBytes);
  read_name(r, "swarm", o.swarm);
  read_name(r, "worker", o.worker);
  read_name(r, "incarnation", o.incarnation);
  r.integer("outbox", o.outbox, 1, kMaxOutbox);
  read_ms(r, "flush_delay_ms", o.flush_delay, 0);
  read_ms(r, "backoff_min_ms", o.backoff_min, 1);
  read_ms(r, "backoff_max_ms", o.backoff_max, 1);
  read_ms(r, "heartbeat_ms", o.heartbeat, 1);
  r.boolean("report_detections", o.report_detections);
  if (r.ok() && o.backoff_max < o.backoff_min) {
    r.fail("backoff_max_ms",
           "at least backoff_min_ms (" + std::to_string(o.backoff_min.count()) + ")",
           json(o.backoff_max.count()));
  }
  return r.finish();
}

// A token as the client sends it: 1..128 bytes of valid UTF-8 (validate()'s rule).
status check_token(const std::string& token) {
  if (token.empty() || token.size() > protocol::kMaxNameBytes || !utf8::is_identifier(token)) {
    return status::error("expected a token of 1.." + std::to_string(protocol::kMaxNameBytes) +
                         " bytes of valid UTF-8, got " + std::to_string(token.size()) + " bytes");
  }
  return {};
}

// The first line of `path`, surrounding whitespace removed (loopguardd's token file rule).
result<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return status::error("cannot read \"" + utf8::repair(path) + "\"");
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return status::error("\"" + utf8::repair(path) + "\": the first line is empty");
  }
  const auto last = line.find_last_not_of(" \t\r\n");
  std::string token = line.substr(first, last - first + 1);
  if (status s = check_token(token); !s.ok()) {
    return s.with_context("\"" + utf8::repair(path) + "\": ");
  }
  return token;
}

}  // namespace

result<sdk_config> parse_sdk_config(const json& doc) {
  sdk_config c;
  const json* daemon = nullptr;
  json rest;
  if (doc.is_object() && doc.contains("daemon")) {
    daemon = &doc["daemon"];
    rest = doc;
    rest.erase("daemon");
  }
  auto detector = parse_config(daemon != nullptr ? rest : doc);
  if (!detector) return detector.error();
  c.detector = std::move(*detector);
  if (daemon != nullptr) {
    c.has_daemon = true;
    if (status s = read_daemon(*daemon, c); !s.ok()) return s;
  }
  return c;
}

result<sdk_config> load_sdk_config(const std::string& path) {
  const std::string name = utf8::repair(path);
  const auto doc = json_input::parse_file(path);
  if (!doc) return doc.error();
  auto c = parse_sdk_config(doc->value);
  if (!c) return c.error().with_context(name + ": ");
  if (!c->token_file.empty()) {
    auto token = read_token_file(c->token_file);
    if (!token) return token.error().with_context(name + ": daemon.token_file: ");
    c->client.token = std::move(*token);
  }
  return c;
}

status apply_sdk_env(sdk_config& c, sdk_env_lookup get) {
  struct var {
    const char* name;
    const char* key;  // in the "daemon" object; nullptr: the token
  };
  static constexpr var kVars[] = {{"LOOPGUARD_DAEMON", "url"},
                                  {"LOOPGUARD_TOKEN", nullptr},
                                  {"LOOPGUARD_SWARM", "swarm"},
                                  {"LOOPGUARD_WORKER", "worker"},
                                  {"LOOPGUARD_CA_FILE", "ca_file"}};
  for (const var& v : kVars) {
    const char* value = get(v.name);
    if (value == nullptr) continue;
    const std::string text = value;
    if (!utf8::is_identifier(text) || text.size() > kMaxPathBytes) {
      return status::error(std::string(v.name) + ": not valid UTF-8, or longer than " +
                           std::to_string(kMaxPathBytes) + " bytes");
    }
    if (v.key == nullptr) {
      if (status s = check_token(text); !s.ok()) return s.with_context(std::string(v.name) + ": ");
      c.client.token = text;
      continue;
    }
    // One key in a "daemon" object of its own, read by the file's rules.
    sdk_config one;
    one.client = c.client;
    if (status s = read_daemon(json{{v.key, text}}, one); !s.ok()) {
      return s.with_context(std::string(v.name) + ": ");
    }
    c.client = std::move(one.client);
  }
  return {};
}

result<sdk_config> resolve_sdk_config(const std::string& path, sdk_env_lookup get) {
  std::string file = path;
  if (const char* env = get("LOOPGUARD_CONFIG"); file.empty() && env != nullptr && *env != '\0') {
    file = env;
  }
  sdk_config c;
  if (!file.empty()) {
    auto loaded = load_sdk_config(file);
    if (!loaded) {
      return path.empty() ? loaded.error().with_context("LOOPGUARD_CONFIG: ") : loaded.error();
    }
    c = std::move(*loaded);
  }
  if (status s = apply_sdk_env(c, get); !s.ok()) return s;
  return c;
}

result<sdk_config> resolve_sdk_config(const std::string& path) {
  return resolve_sdk_config(path, [](const char* n) -> const char* { return std::getenv(n); });
}

json to_json(const sdk_config& c) {
  const client_options& o = c.client;
  json d = {{"outbox", o.outbox},
            {"flush_delay_ms", o.flush_delay.count()},
            {"backoff_min_ms", o.backoff_min.count()},
            {"backoff_max_ms", o.backoff_max.count()},
            {"heartbeat_ms", o.heartbeat.count()},
            {"report_detections", o.report_detections}};
  // An option not set is absent (as in the file), so the output reads back.
  for (const auto& [key, value] : {std::pair<const char*, const std::string&>{"url", o.url},
                                   {"swarm", o.swarm},
                                   {"worker", o.worker},
                                   {"incarnation", o.incarnation},
                                   {"token_file", c.token_file},
                                   {"ca_file", o.ca_file}}) {
    if (!value.empty()) d[key] = value;
  }
  if (!o.token.empty()) d["token"] = "<set>";
  json j = to_json(c.detector);
  j["daemon"] = std::move(d);
  return j;
}

}  // namespace loopguard
