#include "server/daemon_config.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include "loopguard/json_input.hpp"

namespace loopguard::daemon {
namespace {

std::optional<std::string> read_count(const nlohmann::json& j, const char* key, std::uint64_t lo,
                                      std::uint64_t hi, std::uint64_t& out) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::uint64_t>() < lo ||
      it->get<std::uint64_t>() > hi) {
    return std::string("limits.") + key + ": must be an integer in " + std::to_string(lo) + ".." +
           std::to_string(hi) + ", got " + json_input::dump(*it);
  }
  out = it->get<std::uint64_t>();
  return std::nullopt;
}

std::optional<std::string> parse_limits(const nlohmann::json& j, server_limits& l) {
  if (!j.is_object()) return "limits: must be an object";
  for (const auto& [key, v] : j.items()) {
    if (key != "max_connections" && key != "max_send_queue" && key != "idle_timeout_ms" &&
        key != "max_frame") {
      return "limits." + key +
             ": unknown key (known: max_connections, max_send_queue, idle_timeout_ms, max_frame)";
    }
  }
  std::uint64_t v = l.max_connections;
  if (auto e = read_count(j, "max_connections", 1, 1000000, v)) return e;
  l.max_connections = static_cast<std::size_t>(v);
  v = l.max_send_queue;
  if (auto e = read_count(j, "max_send_queue", 1, 1000000, v)) return e;
  l.max_send_queue = static_cast<std::size_t>(v);
  v = static_cast<std::uint64_t>(l.idle_timeout.count());
  if (auto e = read_count(j, "idle_timeout_ms", 100, 86400000, v)) return e;
  l.idle_timeout = std::chrono::milliseconds(v);
  v = l.max_frame;
  if (auto e = read_count(j, "max_frame", 1024, protocol::kMaxFrameBytes, v)) return e;
  l.max_frame = static_cast<std::size_t>(v);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> load_config(const std::string& path, daemon_config& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot read the config file";
  std::ostringstream whole;
  whole << in.rdbuf();
  const std::string text = std::move(whole).str();
  json_input::document doc;
  if (auto e = json_input::parse(text, doc)) return path + ": " + *e;
  const nlohmann::json& j = doc.value;
  if (!j.is_object()) return path + ": not a JSON object";
  daemon_config c = out;
  for (const auto& [key, v] : j.items()) {
    std::optional<std::string> e;
    if (key == "swarm") {
      e = parse_swarm_rules(v, c.rules);
    } else if (key == "limits") {
      e = parse_limits(v, c.limits);
    } else if (key == "checkpoint_interval_ms") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 60000) {
        e = "checkpoint_interval_ms: must be an integer in 1..60000, got " + json_input::dump(v);
      } else {
        c.checkpoint_interval = std::chrono::milliseconds(v.get<std::int64_t>());
      }
    } else {
      e = key + ": unknown key (known: swarm, limits, checkpoint_interval_ms)";
    }
    if (e) return path + ": " + *e;
  }
  out = c;
  return std::nullopt;
}

std::optional<std::string> load_token(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return path + ": cannot read the token file";
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r\n");
  const auto last = line.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return path + ": the token file is empty";
  out = line.substr(first, last - first + 1);
  return std::nullopt;
}

}  // namespace loopguard::daemon
