// What the load programs of scripts/chaos.sh (chaos_load.cpp) and scripts/soak.sh
// (soak_load.cpp) share: the events their SDK workers send, the workers' client options, and
// the daemon's port.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "loopguard/daemon_client.hpp"
#include "loopguard/protocol.hpp"

namespace loopguard::load {

// Event n (1, 2, 3, ...) of every worker: fingerprint 1 + n % fps, with a result and a time
// fixed per fingerprint, so a swarm's state does not depend on how its workers interleave
// (chaos_load.cpp compares digests on that) and stays the same size however long it runs.
inline protocol::event nth_event(std::uint64_t n, std::uint64_t fps) {
  const std::uint64_t fp = 1 + n % fps;
  protocol::event e;
  e.seq = n;
  e.tool = "search";
  e.summary = "query=q" + std::to_string(fp);
  e.exact = fp;
  e.structural = fp + 1000000;
  e.result = 1000 + fp;
  e.t = static_cast<double>(fp);
  return e;
}

// A worker reconnecting fast (the daemon is on loopback); the incarnation is new for every
// client object.
inline client_options worker_options(unsigned short port, std::string swarm, std::string worker) {
  client_options c;
  c.url = "ws://127.0.0.1:" + std::to_string(port);
  c.swarm = std::move(swarm);
  c.worker = std::move(worker);
  c.backoff_min = std::chrono::milliseconds(20);
  c.backoff_max = std::chrono::milliseconds(500);
  if (auto st = validate(c); !st.ok()) throw std::runtime_error(st.message());
  return c;
}

// `port`, or the one in `port_file` when port is 0; 0 when there is none.
inline unsigned short daemon_port(unsigned short port, const std::string& port_file) {
  if (port != 0) return port;
  std::ifstream in(port_file);
  unsigned short p = 0;
  return in >> p ? p : 0;
}

}  // namespace loopguard::load
