#include "server/http_api.hpp"

#include <map>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/hex.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"
#include "server/dashboard_asset.hpp"
#include "server/server_context.hpp"
#include "server/worker_url.hpp"

namespace loopguard::daemon {
namespace {

constexpr std::size_t kTopFingerprints = 20;

using nlohmann::json;

json cost_json(const protocol::cost& c) {
  return {{"tokens", c.tokens}, {"amount", c.amount}};
}

json summary_json(const swarm_summary& s) {
  json j = {{"swarm", s.swarm},
            {"fingerprints", s.fingerprints},
            {"workers", s.workers},
            {"verdicts", s.verdicts},
            {"calls", s.calls},
            {"spent", cost_json(s.spent)},
            {"wasted", cost_json(s.wasted)},
            {"unit", s.unit},
            {"budget", {{"level", std::string(to_string(s.budget))}, {"used", s.budget_used}}}};
  // A tombstone (docs/operations.md, "Retention"): when it was expired, Unix seconds.
  if (s.expired != 0) j["expired"] = s.expired;
  return j;
}

json verdict_json(const protocol::verdict& v) {
  return {{"tool", v.tool},
          {"kind", v.kind},
          {"fingerprint", to_hex(v.fingerprint)},
          {"level", std::string(to_string(v.level))},
          {"calls", v.calls},
          {"workers", v.workers},
          {"cost", cost_json(v.spent)},
          {"message", v.message},
          {"t", v.t}};
}

http_reply json_reply(unsigned status, const json& body) {
  return {status, "application/json", json_input::dump(body) + "\n"};
}

json top_json(const std::vector<fingerprint_row>& rows) {
  json top = json::array();
  for (const auto& row : rows) {
    top.push_back({{"kind", to_string(row.key.kind)},
                   {"fingerprint", to_hex(row.key.value)},
                   {"tool", row.stats.tool},
                   {"summary", row.stats.summary},
                   {"calls", row.stats.calls},
                   {"counted", row.stats.counted},
                   {"workers", row.stats.workers.size()},
                   {"first_seen", row.stats.first_seen},
                   {"last_seen", row.stats.last_seen},
                   {"wasted", cost_json(row.stats.wasted)},
                   {"level", std::string(to_string(row.stats.level))}});
  }
  return top;
}

json detection_json(const protocol::detection& d) {
  json j{{"detector", d.detector},
         {"level", std::string(to_string(d.level))},
         {"count", d.count},
         {"t", d.t}};
  if (!d.tool.empty()) j["tool"] = d.tool;
  if (!d.message.empty()) j["message"] = d.message;
  return j;
}

json worker_json(std::string_view name, const local_detections::worker_view* w, bool observing) {
  json counts = json::object(), last = json::array();
  if (w != nullptr) {
    static constexpr const char* kLevels[] = {"warn", "critical", "terminate"};
    for (const auto& [detector, by_level] : w->counts) {
      json& c = counts[detector] = json::object();
      for (std::size_t i = 0; i < by_level.size(); ++i) {
        if (by_level[i] > 0) c[kLevels[i]] = by_level[i];
      }
    }
    for (const auto& d : w->last) last.push_back(detection_json(d));
  }
  return {{"name", name},
          {"mode", observing ? "observe" : "enforce"},
          {"detections", w != nullptr ? w->total : 0},
          {"detection_counts", std::move(counts)},
          {"last_detections", std::move(last)}};
}

// Every worker the state knows, every worker that reported a detection and every worker that
// observes, sorted by name.
json workers_json(const std::vector<std::string>& names,
                  const std::vector<local_detections::worker_view>& reported,
                  const std::set<std::string, std::less<>>& observing) {
  std::map<std::string_view, const local_detections::worker_view*> all;
  for (const auto& name : names) all.emplace(name, nullptr);
  for (const auto& name : observing) all.emplace(name, nullptr);
  for (const auto& w : reported) all[w.name] = &w;
  json out = json::array();
  for (const auto& [name, w] : all) out.push_back(worker_json(name, w, observing.contains(name)));
  return out;
}

http_reply swarm_detail(const std::string& name, const swarm_service& service,
                        const api_extras& extras) {
  auto j = swarm_json(name, service, extras);
  if (!j) return json_reply(404, json{{"error", "no such swarm"}});
  return json_reply(200, *j);
}

// Walks every fingerprint of the swarm under the lock: for tests and audits, not for polling.
http_reply swarm_digest(const std::string& name, const swarm_service& service) {
  const auto d = service.read([&](const shared_economics_state& s) -> std::optional<std::uint64_t> {
    if (!s.summary(name)) return std::nullopt;
    return s.digest(name);
  });
  if (!d) return json_reply(404, json{{"error", "no such swarm"}});
  return json_reply(200, json{{"swarm", name}, {"digest", to_hex(*d)}});
}

// /api/swarms/{id} or /api/swarms/{id}/digest; `rest` is what follows /api/swarms/.
http_reply swarm_route(std::string_view rest, const swarm_service& service,
                       const api_extras& extras) {
  constexpr std::string_view digest_suffix = "/digest";
  const bool digest = rest.size() > digest_suffix.size() && rest.ends_with(digest_suffix);
  if (digest) rest.remove_suffix(digest_suffix.size());
  const auto name = percent_decode(rest);
  if (!name) return json_reply(400, json{{"error", "bad swarm id"}});
  if (!utf8::is_valid(*name))
    return json_reply(400, json{{"error", "the swarm id is not valid UTF-8"}});
  return digest ? swarm_digest(*name, service) : swarm_detail(*name, service, extras);
}

}  // namespace

// Each view copies what it shows under the service's lock and serializes after releasing it.
json swarms_json(const swarm_service& service, const api_extras& extras) {
  const auto swarms = service.read([](const shared_economics_state& s) { return s.swarms(); });
  const auto connected = extras.registry ? extras.registry->connected_counts()
                                         : std::map<std::string, std::size_t, std::less<>>{};
  json list = json::array();
  for (const auto& sum : swarms) {
    json j = summary_json(sum);
    const auto c = connected.find(sum.swarm);
    j["connected"] = c == connected.end() ? 0 : c->second;
    list.push_back(std::move(j));
  }
  return json{{"swarms", std::move(list)}};
}

std::optional<json> swarm_json(const std::string& name, const swarm_service& service,
                               const api_extras& extras) {
  const auto v =
      service.read([&](const shared_economics_state& s) { return s.view(name, kTopFingerprints); });
  if (!v) return std::nullopt;
  json j = summary_json(v->summary);
  const auto connected =
      extras.registry ? extras.registry->connected(name) : std::vector<std::string>{};
  j["connected"] = connected;
  j["worker_names"] = v->worker_names;
  j["workers"] = workers_json(
      v->worker_names,
      extras.detections ? extras.detections->of_swarm(name)
                        : std::vector<local_detections::worker_view>{},
      extras.modes ? extras.modes->observing(name) : std::set<std::string, std::less<>>{});
  j["top"] = top_json(v->top);
  json verdicts = json::array();
  for (const auto& x : v->verdicts) verdicts.push_back(verdict_json(x));
  j["verdicts"] = std::move(verdicts);
  return j;
}

http_reply json_error(unsigned status, std::string_view message) {
  return json_reply(status, json{{"error", message}});
}

http_reply route(std::string_view method, std::string_view target, const swarm_service& service,
                 const daemon_metrics& metrics, const api_extras& extras) {
  if (const auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  if (method != "GET" && method != "HEAD") {
    return {405, "application/json", json_input::dump(json{{"error", "only GET"}}) + "\n"};
  }
  if (target == "/") {
    // The page is one file: its own inline script and style, data from this origin only.
    return {200,
            "text/html; charset=utf-8",
            std::string(dashboard_html()),
            {{"Content-Security-Policy",
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
              "frame-ancestors 'none'"},
             {"X-Content-Type-Options", "nosniff"}}};
  }
  if (target == "/healthz") return {200, "text/plain", "ok\n"};
  if (target == "/metrics") {
    auto [counters, swarms] = service.read(
        [](const shared_economics_state& s) { return std::pair(s.counters(), s.swarms()); });
    return {200, "text/plain; version=0.0.4",
            metrics.render(counters, swarms, service.retention())};
  }
  if (target == "/api/swarms") return json_reply(200, swarms_json(service, extras));
  constexpr std::string_view prefix = "/api/swarms/";
  if (target.starts_with(prefix) && target.size() > prefix.size()) {
    return swarm_route(target.substr(prefix.size()), service, extras);
  }
  return {404, "application/json", json_input::dump(json{{"error", "not found"}}) + "\n"};
}

}  // namespace loopguard::daemon
