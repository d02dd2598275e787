// client_options: validation, the environment, and the daemon URL.
#include <cstdlib>
#include <fstream>
#include <string>

#include "client/daemon_url.hpp"
#include "loopguard/daemon_client.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

status check_name(std::string_view field, const std::string& v) {
  if (v.empty() || v.size() > protocol::kMaxNameBytes) {
    return status::error(std::string(field) + ": expected 1.." +
                         std::to_string(protocol::kMaxNameBytes) + " bytes, got " +
                         std::to_string(v.size()));
  }
  if (!utf8::is_identifier(v)) {
    return status::error(std::string(field) +
                         ": not valid UTF-8 (an identifier may not hold invalid bytes or U+FFFD)");
  }
  return {};
}

status check_sizes(const client_options& o) {
  if (o.outbox == 0) return status::error("outbox: expected at least 1 event, got 0");
  if (o.backoff_min.count() <= 0 || o.backoff_max < o.backoff_min) {
    return status::error("backoff: expected 0 < backoff_min <= backoff_max");
  }
  if (o.flush_delay.count() < 0) return status::error("flush_delay: expected >= 0 ms");
  if (o.heartbeat.count() <= 0) return status::error("heartbeat: expected > 0 ms");
  return {};
}

}  // namespace

status validate(const client_options& o) {
  if (auto u = client::parse_daemon_url(o.url); !u) return u.error().with_context("url: ");
  for (const auto& [field, value] :
       {std::pair<std::string_view, const std::string&>{"swarm", o.swarm}, {"worker", o.worker}}) {
    if (status s = check_name(field, value); !s.ok()) return s;
  }
  if (!o.incarnation.empty()) {
    if (status s = check_name("incarnation", o.incarnation); !s.ok()) return s;
  }
  if (!o.token.empty()) {
    if (status s = check_name("token", o.token); !s.ok()) return s;
  }
  if (!o.ca_file.empty() && !std::ifstream(o.ca_file)) {
    return status::error("ca_file: cannot read \"" + utf8::repair(o.ca_file) + "\"");
  }
  return check_sizes(o);
}

result<client_options> options_from_env(client_options base) {
  const std::pair<const char*, std::string*> vars[] = {{"LOOPGUARD_DAEMON", &base.url},
                                                       {"LOOPGUARD_TOKEN", &base.token},
                                                       {"LOOPGUARD_SWARM", &base.swarm},
                                                       {"LOOPGUARD_WORKER", &base.worker},
                                                       {"LOOPGUARD_CA_FILE", &base.ca_file}};
  for (const auto& [name, field] : vars) {
    const char* v = std::getenv(name);
    if (v == nullptr) continue;
    if (!utf8::is_identifier(v) || std::string_view(v).size() > 4096) {
      return status::error(std::string(name) + ": not valid UTF-8, or longer than 4096 bytes");
    }
    *field = v;
  }
  return base;
}

}  // namespace loopguard
