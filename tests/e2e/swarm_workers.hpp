// Agents that link the SDK, for the end-to-end tests: a swarm_worker joined to a real
// loopguardd, and waiting until what it sent is acknowledged.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>

#include "loopguard/swarm_worker.hpp"

namespace loopguard::test {

// A worker of `swarm` connected to the daemon on `port` (fast reconnects for tests).
inline std::unique_ptr<swarm_worker> join(unsigned short port, const std::string& swarm,
                                          const std::string& worker, manager_config config = {}) {
  using namespace std::chrono_literals;
  auto w = std::make_unique<swarm_worker>(std::move(config));
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(port);
  o.swarm = swarm;
  o.worker = worker;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  REQUIRE(w->connect(o).ok());
  REQUIRE(w->client()->wait_connected(10s));
  return w;
}

// Waits until every event the worker judged so far is acknowledged.
inline void settle(swarm_worker& w, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto* c = w.client();
  REQUIRE_MESSAGE(c->wait_acknowledged(c->stats().sent, timeout), c->stats().last_error);
}

}  // namespace loopguard::test
