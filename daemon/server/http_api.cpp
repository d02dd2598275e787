#include "server/http_api.hpp"

#include <nlohmann/json.hpp>

#include "loopguard/hex.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::daemon {
namespace {

constexpr std::size_t kTopFingerprints = 20;

using nlohmann::json;

// %XX decoding of one path segment; nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

json summary_json(const swarm_summary& s) {
  return {{"swarm", s.swarm},     {"fingerprints", s.fingerprints},
          {"workers", s.workers}, {"verdicts", s.verdicts},
          {"calls", s.calls},     {"digest", to_hex(s.digest)}};
}

json verdict_json(const global_verdict& v) {
  return {{"tool", v.tool},
          {"kind", v.fingerprint_kind},
          {"fingerprint", to_hex(v.fingerprint)},
          {"level", std::string(to_string(v.level))},
          {"calls", v.calls},
          {"workers", v.workers},
          {"message", v.message},
          {"t", v.t}};
}

http_reply swarm_detail(std::string_view name, const shared_economics_state& s) {
  const auto sum = s.summary(name);
  if (!sum)
    return {404, "application/json", json_input::dump(json{{"error", "no such swarm"}}) + "\n"};
  json j = summary_json(*sum);
  j["worker_names"] = s.worker_names(name);
  json top = json::array();
  for (const auto& row : s.top_fingerprints(name, kTopFingerprints)) {
    top.push_back({{"kind", to_string(row.key.kind)},
                   {"fingerprint", to_hex(row.key.value)},
                   {"tool", row.stats.tool},
                   {"summary", row.stats.summary},
                   {"calls", row.stats.calls},
                   {"counted", row.stats.counted},
                   {"workers", row.stats.workers.size()},
                   {"first_seen", row.stats.first_seen},
                   {"last_seen", row.stats.last_seen},
                   {"level", std::string(to_string(row.stats.level))}});
  }
  j["top"] = std::move(top);
  json verdicts = json::array();
  for (const auto& v : s.verdicts(name)) verdicts.push_back(verdict_json(v));
  j["verdicts"] = std::move(verdicts);
  return {200, "application/json", json_input::dump(j) + "\n"};
}

}  // namespace

http_reply route(std::string_view method, std::string_view target, const swarm_service& service,
                 const daemon_metrics& metrics) {
  if (const auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  if (method != "GET" && method != "HEAD") {
    return {405, "application/json", json_input::dump(json{{"error", "only GET"}}) + "\n"};
  }
  if (target == "/healthz") return {200, "text/plain", "ok\n"};
  if (target == "/metrics") {
    const auto counters =
        service.read([](const shared_economics_state& s) { return s.counters(); });
    return {200, "text/plain; version=0.0.4", metrics.render(counters)};
  }
  if (target == "/api/swarms") {
    return service.read([](const shared_economics_state& s) {
      json list = json::array();
      for (const auto& sum : s.swarms()) list.push_back(summary_json(sum));
      return http_reply{200, "application/json", json_input::dump(json{{"swarms", list}}) + "\n"};
    });
  }
  constexpr std::string_view prefix = "/api/swarms/";
  if (target.starts_with(prefix) && target.size() > prefix.size()) {
    const auto name = percent_decode(target.substr(prefix.size()));
    if (!name)
      return {400, "application/json", json_input::dump(json{{"error", "bad swarm id"}}) + "\n"};
    if (!utf8::is_valid(*name)) {
      return {400, "application/json",
              json_input::dump(json{{"error", "the swarm id is not valid UTF-8"}}) + "\n"};
    }
    return service.read([&](const shared_economics_state& s) { return swarm_detail(*name, s); });
  }
  return {404, "application/json", json_input::dump(json{{"error", "not found"}}) + "\n"};
}

}  // namespace loopguard::daemon
