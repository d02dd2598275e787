// The plain-HTTP side of the port: GET / (the dashboard page), /healthz, /metrics, /api/swarms,
// /api/swarms/{id} (docs/operations.md). Pure: a target in, a response's parts out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/daemon_metrics.hpp"
#include "service/local_detections.hpp"
#include "service/swarm_service.hpp"
#include "service/worker_modes.hpp"

namespace loopguard::daemon {

class session_registry;

struct http_reply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers = {};  // e.g. Set-Cookie
};

// {"error": message} with `status`.
http_reply json_error(unsigned status, std::string_view message);

// What the views show beside the swarm state, each when given: what the workers reported,
// which of them observe, which are connected now.
struct api_extras {
  const local_detections* detections = nullptr;
  const worker_modes* modes = nullptr;
  const session_registry* registry = nullptr;
};

// GET /api/swarms's document, and GET /api/swarms/{id}'s (nullopt: no such swarm). The
// dashboard's live snapshots hold the same documents.
nlohmann::json swarms_json(const swarm_service& service, const api_extras& extras = {});
std::optional<nlohmann::json> swarm_json(const std::string& swarm, const swarm_service& service,
                                         const api_extras& extras = {});

// GET (or HEAD) of /healthz, /metrics and /api/swarms...; access is checked by the caller.
http_reply route(std::string_view method, std::string_view target, const swarm_service& service,
                 const daemon_metrics& metrics, const api_extras& extras = {});

}  // namespace loopguard::daemon
