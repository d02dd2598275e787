// The JSON form of the SDK's counters, for the C API's lg_stats (docs/sdk.md, "C API").
#pragma once

#include <nlohmann/json.hpp>

#include "loopguard/daemon_client.hpp"
#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/swarm_worker.hpp"

namespace loopguard {

// Every field of manager_stats; `detections` as {"exact": {"warn": n, "critical": n,
// "terminate": n}, ...} with every detector.
nlohmann::ordered_json to_json(const manager_stats& s);
// Every field of client_stats.
nlohmann::ordered_json to_json(const client_stats& s);
// Every field of recording_stats.
nlohmann::ordered_json to_json(const recording_stats& s);

}  // namespace loopguard
