#include "server/daemon_config.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"

namespace loopguard::daemon {
namespace {

void read_limits(json_fields::object x, server_limits& l) {
  x.integer("max_connections", l.max_connections, 1, 1000000);
  x.integer("max_send_queue", l.max_send_queue, 1, 1000000);
  auto idle_ms = static_cast<std::uint64_t>(l.idle_timeout.count());
  if (x.integer("idle_timeout_ms", idle_ms, 100, 86400000)) {
    l.idle_timeout = std::chrono::milliseconds(idle_ms);
  }
  x.integer("max_frame", l.max_frame, 1024, protocol::kMaxFrameBytes);
}

status read_config(const nlohmann::json& doc, daemon_config& c) {
  json_fields::reader r(doc, {.name = "configuration"});
  read_swarm_rules(r.at("swarm"), c.rules);
  read_limits(r.at("limits"), c.limits);
  std::uint64_t interval_ms = 0;
  if (r.integer("checkpoint_interval_ms", interval_ms, 1, 60000)) {
    c.checkpoint_interval = std::chrono::milliseconds(interval_ms);
  }
  status s = r.finish();
  if (s.ok()) s = validate(c.rules);
  return s;
}

}  // namespace

result<daemon_config> load_config(const std::string& path, daemon_config base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return status::error(path + ": cannot read the config file");
  std::ostringstream whole;
  whole << in.rdbuf();
  const std::string text = std::move(whole).str();
  const auto doc = json_input::parse(text);
  if (!doc) return doc.error().with_context(path + ": ");
  if (status s = read_config(doc->value, base); !s.ok()) return s.with_context(path + ": ");
  return base;
}

result<std::string> load_token(const std::string& path) {
  std::ifstream in(path);
  if (!in) return status::error(path + ": cannot read the token file");
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r\n");
  const auto last = line.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return status::error(path + ": the token file is empty");
  return line.substr(first, last - first + 1);
}

}  // namespace loopguard::daemon
