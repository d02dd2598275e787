#include "server/daemon_config.hpp"

#include <sys/stat.h>
#include <algorithm>
#include <charconv>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::daemon {
namespace {

std::string known_features() {
  std::string out;
  for (auto f : kProtocolFeatures) out += (out.empty() ? "" : ", ") + std::string(f);
  return out;
}

bool is_feature(std::string_view name) {
  return std::find(kProtocolFeatures.begin(), kProtocolFeatures.end(), name) !=
         kProtocolFeatures.end();
}

// "protocol_features": an array of known feature names, each once ([] is the v1 baseline).
void read_features(json_fields::reader& r, std::vector<std::string>& out) {
  std::vector<std::string> names;
  if (!r.strings("protocol_features", names)) return;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string path = "protocol_features[" + std::to_string(i) + "]";
    if (!is_feature(names[i])) {
      return r.fail(path, "one of " + known_features(), nlohmann::json(names[i]));
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      return r.fail(path, "a feature not listed before", nlohmann::json(names[i]));
    }
  }
  out = std::move(names);
}

void read_limits(json_fields::object x, server_limits& l) {
  x.integer("max_connections", l.max_connections, 1, 1000000);
  x.integer("max_send_queue", l.max_send_queue, 1, 1000000);
  auto idle_ms = static_cast<std::uint64_t>(l.idle_timeout.count());
  if (x.integer("idle_timeout_ms", idle_ms, 100, 86400000)) {
    l.idle_timeout = std::chrono::milliseconds(idle_ms);
  }
  auto request_ms = static_cast<std::uint64_t>(l.request_timeout.count());
  if (x.integer("request_timeout_ms", request_ms, 100, 3600000)) {
    l.request_timeout = std::chrono::milliseconds(request_ms);
  }
  x.integer("max_frame", l.max_frame, 1024, protocol::kMaxFrameBytes);
  // At least 1,000: one batch (at most 1,024 events) then costs at most about a second's pause.
  x.integer("max_events_per_second", l.max_events_per_second, 1000, 1'000'000'000);
}

// Seconds as integers; 0 turns that expiry off. Up to 10 years.
void read_retention(json_fields::object x, daemon_config& c) {
  constexpr std::uint64_t kMaxSeconds = 10ULL * 365 * 86400;
  const auto seconds = [&](const char* key, double& out) {
    auto v = static_cast<std::uint64_t>(out);
    if (x.integer(key, v, 0, kMaxSeconds)) out = static_cast<double>(v);
  };
  seconds("incarnation_idle_s", c.retention.incarnation_idle);
  seconds("swarm_idle_s", c.retention.swarm_idle);
  seconds("expired_kept_s", c.retention.expired_kept);
  auto sweep_ms = static_cast<std::uint64_t>(c.sweep_interval.count());
  if (x.integer("sweep_interval_ms", sweep_ms, 10, 3'600'000)) {
    c.sweep_interval = std::chrono::milliseconds(sweep_ms);
  }
}

void read_log(json_fields::object x, daemon_config& c) {
  x.one_of("level", c.log_level,
           {{"trace", "trace"},
            {"debug", "debug"},
            {"info", "info"},
            {"warn", "warn"},
            {"error", "error"},
            {"critical", "critical"},
            {"off", "off"}});
  x.one_of("format", c.log_format, {{"text", "text"}, {"json", "json"}});
}

void read_tls(json_fields::object x, daemon_config& c) {
  x.string("cert", c.tls_cert, 4096);
  x.string("key", c.tls_key, 4096);
}

// The process's keys, shared by the file and the environment.
void read_process(json_fields::reader& r, daemon_config& c) {
  if (r.string("listen", c.listen, 256) && !parse_listen(c.listen)) {
    r.fail("listen", "address:port (an IP address, port 0..65535)", nlohmann::json(c.listen));
  }
  r.string("db", c.db, 4096);
  r.integer("threads", c.threads, 1, 64);
  r.string("token_file", c.token_file, 4096);
  r.string("tokens_file", c.tokens_file, 4096);
  r.string("metrics_token_file", c.metrics_token_file, 4096);
  r.string("cluster_file", c.cluster_file, 4096);
  r.string("cluster_self", c.cluster_self, 64);
  r.integer("compact_log_mb", c.compact_log_mb, 1, 65536);
  r.boolean("quick_check", c.quick_check);
  read_log(r.at("log"), c);
  read_tls(r.at("tls"), c);
}

status read_config(const nlohmann::json& doc, daemon_config& c) {
  json_fields::reader r(doc, {.name = "configuration"});
  read_process(r, c);
  read_swarm_rules(r.at("swarm"), c.rules);
  read_limits(r.at("limits"), c.limits);
  read_retention(r.at("retention"), c);
  std::uint64_t interval_ms = 0;
  if (r.integer("checkpoint_interval_ms", interval_ms, 1, 60000)) {
    c.checkpoint_interval = std::chrono::milliseconds(interval_ms);
  }
  read_features(r, c.protocol_features);
  status s = r.finish();
  if (s.ok()) s = validate(c.rules);
  return s;
}

}  // namespace

std::optional<boost::asio::ip::tcp::endpoint> parse_listen(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view digits = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(std::string(host), ec);
  if (ec) return std::nullopt;
  unsigned port = 0;
  const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || err != std::errc{} || end != digits.data() + digits.size() ||
      port > 65535) {
    return std::nullopt;
  }
  return boost::asio::ip::tcp::endpoint(addr, static_cast<unsigned short>(port));
}

std::vector<std::string> all_protocol_features() {
  return {kProtocolFeatures.begin(), kProtocolFeatures.end()};
}

result<std::vector<std::string>> parse_protocol_features(std::string_view list) {
  if (list == "all") return all_protocol_features();
  std::vector<std::string> out;
  if (list == "none") return out;
  while (true) {
    const auto comma = list.find(',');
    const std::string name(list.substr(0, comma));
    if (!is_feature(name)) {
      return status::error("--protocol-features: unknown feature \"" + name +
                           "\" (known: " + known_features() + "; or all, none)");
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return status::error("--protocol-features: \"" + name + "\" is listed twice");
    }
    out.push_back(name);
    if (comma == std::string_view::npos) return out;
    list.remove_prefix(comma + 1);
  }
}

result<daemon_config> load_config(const std::string& path, daemon_config base) {
  const auto doc = json_input::parse_file(path);
  if (!doc) return doc.error();
  if (status s = read_config(doc->value, base); !s.ok()) return s.with_context(path + ": ");
  return base;
}

status apply_env(daemon_config& c, env_lookup get) {
  // Variable, key, and whether the value is JSON (numbers, booleans) or a plain string.
  struct var {
    const char* name;
    const char* key;
    bool json;
  };
  static constexpr var kVars[] = {
      {"LOOPGUARD_LISTEN", "listen", false},
      {"LOOPGUARD_DB", "db", false},
      {"LOOPGUARD_THREADS", "threads", true},
      {"LOOPGUARD_TOKEN_FILE", "token_file", false},
      {"LOOPGUARD_TOKENS_FILE", "tokens_file", false},
      {"LOOPGUARD_METRICS_TOKEN_FILE", "metrics_token_file", false},
      {"LOOPGUARD_TLS_CERT", "tls.cert", false},
      {"LOOPGUARD_TLS_KEY", "tls.key", false},
      {"LOOPGUARD_CLUSTER_FILE", "cluster_file", false},
      {"LOOPGUARD_CLUSTER_SELF", "cluster_self", false},
      {"LOOPGUARD_COMPACT_LOG_MB", "compact_log_mb", true},
      {"LOOPGUARD_CHECKPOINT_INTERVAL_MS", "checkpoint_interval_ms", true},
      {"LOOPGUARD_LOG_LEVEL", "log.level", false},
      {"LOOPGUARD_LOG_FORMAT", "log.format", false},
      {"LOOPGUARD_INCARNATION_IDLE_S", "retention.incarnation_idle_s", true},
      {"LOOPGUARD_SWARM_IDLE_S", "retention.swarm_idle_s", true},
      {"LOOPGUARD_EXPIRED_KEPT_S", "retention.expired_kept_s", true},
  };
  for (const var& v : kVars) {
    const char* value = get(v.name);
    if (value == nullptr) continue;
    nlohmann::json parsed;
    if (v.json) {
      auto doc = json_input::parse(value);
      if (!doc)
        return status::error(std::string(v.name) + ": expected a number, got \"" + value + "\"");
      parsed = doc->value;
    } else {
      parsed = utf8::repair(value);
    }
    // One key in a document of its own, read by the file's rules.
    nlohmann::json doc = nlohmann::json::object();
    const std::string key = v.key;
    if (const auto dot = key.find('.'); dot != std::string::npos) {
      doc[key.substr(0, dot)][key.substr(dot + 1)] = parsed;
    } else {
      doc[key] = parsed;
    }
    if (status s = read_config(doc, c); !s.ok()) {
      return s.with_context(std::string(v.name) + ": ");
    }
  }
  return {};
}

nlohmann::json to_json(const daemon_config& c) {
  return {{"listen", c.listen},
          {"db", c.db},
          {"threads", c.threads},
          {"token_file", c.token_file},
          {"tokens_file", c.tokens_file},
          {"metrics_token_file", c.metrics_token_file},
          {"cluster_file", c.cluster_file},
          {"cluster_self", c.cluster_self},
          {"compact_log_mb", c.compact_log_mb},
          {"quick_check", c.quick_check},
          {"log", {{"level", c.log_level}, {"format", c.log_format}}},
          {"tls", {{"cert", c.tls_cert}, {"key", c.tls_key}}},
          {"swarm", to_json(c.rules)},
          {"limits",
           {{"max_connections", c.limits.max_connections},
            {"max_send_queue", c.limits.max_send_queue},
            {"idle_timeout_ms", c.limits.idle_timeout.count()},
            {"request_timeout_ms", c.limits.request_timeout.count()},
            {"max_frame", c.limits.max_frame},
            {"max_events_per_second", c.limits.max_events_per_second}}},
          {"retention",
           {{"incarnation_idle_s", static_cast<std::uint64_t>(c.retention.incarnation_idle)},
            {"swarm_idle_s", static_cast<std::uint64_t>(c.retention.swarm_idle)},
            {"expired_kept_s", static_cast<std::uint64_t>(c.retention.expired_kept)},
            {"sweep_interval_ms", c.sweep_interval.count()}}},
          {"checkpoint_interval_ms", c.checkpoint_interval.count()},
          {"protocol_features", c.protocol_features}};
}

namespace {

// The mode of `path` in four octal digits when any of `bits` is set in it; nullopt when none is
// (or the file cannot be stat'ed).
std::optional<std::string> mode_with(const std::string& path, mode_t bits) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & bits) == 0) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return mode;
}

}  // namespace

std::optional<std::string> loose_key_mode(const std::string& path) {
  return mode_with(path, S_IROTH | S_IWOTH | S_IWGRP);
}

result<std::string> read_secret_file(const std::string& path) {
  constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) return status::error(path + ": cannot read the file");
  if (const auto mode = mode_with(path, S_IRWXG | S_IRWXO)) {
    return status::error(path + ": the file holds secrets but may be read by others (mode " +
                         *mode + "); make it readable by its owner only: chmod 600 " + path);
  }
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxBytes) return status::error(path + ": larger than 1 MiB");
  return text;
}

result<std::string> load_token(const std::string& path) {
  auto text = read_secret_file(path);
  if (!text) return text.error();
  const std::string_view line = std::string_view(*text).substr(0, text->find('\n'));
  const auto first = line.find_first_not_of(" \t\r");
  const auto last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos) return status::error(path + ": the token file is empty");
  return std::string(line.substr(first, last - first + 1));
}

result<token_table> load_tokens(const daemon_config& c) {
  token_table tokens;
  if (!c.tokens_file.empty()) {
    auto text = read_secret_file(c.tokens_file);
    if (!text) return text.error();
    auto parsed = token_table::parse(*text, c.tokens_file);
    if (!parsed) return parsed.error();
    tokens = std::move(*parsed);
  }
  if (!c.token_file.empty()) {
    auto token = load_token(c.token_file);
    if (!token) return token.error();
    if (auto s = tokens.add(token_table::single_admin(std::move(*token))); !s.ok()) {
      return s.with_context(c.token_file + ": ");
    }
  }
  return tokens;
}

}  // namespace loopguard::daemon
