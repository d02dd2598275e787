#include "server/daemon_config.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"

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
  read_features(r, c.protocol_features);
  status s = r.finish();
  if (s.ok()) s = validate(c.rules);
  return s;
}

}  // namespace

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
