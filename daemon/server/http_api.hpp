// The plain-HTTP side of the port: GET /healthz, /metrics, /api/swarms, /api/swarms/{id}
// (docs/operations.md). Pure: a target in, a response's parts out.
#pragma once

#include <string>
#include <string_view>

#include "service/daemon_metrics.hpp"
#include "service/local_detections.hpp"
#include "service/swarm_service.hpp"
#include "service/worker_modes.hpp"

namespace loopguard::daemon {

struct http_reply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// {"error": message} with `status`.
http_reply json_error(unsigned status, std::string_view message);

// `detections` and `modes` (when given) add what the workers reported and which of them
// observe to GET /api/swarms/{id}.
http_reply route(std::string_view method, std::string_view target, const swarm_service& service,
                 const daemon_metrics& metrics, const local_detections* detections = nullptr,
                 const worker_modes* modes = nullptr);

}  // namespace loopguard::daemon
