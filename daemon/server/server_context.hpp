// What every connection of one loopguardd shares: the swarm service, the metrics, the
// registry of live WebSocket sessions, the limits and the token.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "cluster/cluster_ring.hpp"
#include "loopguard/protocol.hpp"
#include "server/access_control.hpp"
#include "server/durable_waiters.hpp"
#include "service/daemon_metrics.hpp"
#include "service/local_detections.hpp"
#include "service/swarm_service.hpp"
#include "service/worker_modes.hpp"

namespace loopguard::daemon {

class websocket_session;
class dashboard_session;

// Limits with their defaults (docs/operations.md, "Limits"); a config's "limits" object may
// override them.
struct server_limits {
  static constexpr std::size_t kMaxConnections = 1024;               // open WebSocket sessions
  static constexpr std::size_t kMaxSendQueue = 1024;                 // frames queued to one worker
  static constexpr std::chrono::milliseconds kIdleTimeout{120'000};  // no message received
  static constexpr std::chrono::seconds kHandshakeTimeout{10};
  // From a request's first byte to its last header and body byte (a slow or never finished
  // request, slowloris, is dropped then); the upgrade request of a worker included.
  static constexpr std::chrono::milliseconds kRequestTimeout{30'000};
  // From the error frame to the end of the close handshake; then the socket is torn down.
  static constexpr std::chrono::seconds kCloseTimeout{5};
  static constexpr std::size_t kMaxHttpHeaderBytes = 8192;
  // Frames above max_frame are refused with an error message; above this multiple Beast stops
  // reading them and closes with 1009 at once.
  static constexpr std::size_t kHardFrameFactor = 4;

  std::size_t max_connections = kMaxConnections;
  std::size_t max_send_queue = kMaxSendQueue;
  std::chrono::milliseconds idle_timeout = kIdleTimeout;
  std::chrono::milliseconds request_timeout = kRequestTimeout;
  std::size_t max_frame = protocol::kMaxFrameBytes;
  // New events per second one connection may send (resent ones are free), by back-pressure:
  // beyond it the daemon reads that connection more slowly, never closes it. A burst of one
  // second's worth passes at once.
  static constexpr std::uint64_t kMaxEventsPerSecond = 1'000'000;
  std::uint64_t max_events_per_second = kMaxEventsPerSecond;
};

// The sessions that said hello, by swarm. Holds weak_ptrs only: a session's lifetime is its
// own async chain.
class session_registry {
 public:
  using entry = std::weak_ptr<websocket_session>;
  void add(const std::string& swarm, const websocket_session* key, entry session);
  void remove(const std::string& swarm, const websocket_session* key);
  std::vector<entry> of_swarm(std::string_view swarm) const;
  std::vector<entry> all() const;
  // The workers of `swarm` with an open session now, sorted, each once; and their count by swarm.
  std::vector<std::string> connected(std::string_view swarm) const;
  std::map<std::string, std::size_t, std::less<>> connected_counts() const;

 private:
  mutable std::mutex mu_;  // guards by_swarm_
  std::unordered_map<std::string, std::vector<std::pair<const websocket_session*, entry>>>
      by_swarm_;
};

struct server_context {
  server_context(swarm_service& s, daemon_metrics& m) : service(s), metrics(m) {}
  swarm_service& service;
  daemon_metrics& metrics;
  session_registry registry;
  // The sessions with batches (or gaps) awaiting a group commit: on_durable() tells only them.
  durable_waiters<std::weak_ptr<websocket_session>> ack_waiters;
  local_detections detections;  // what workers reported (feature detections)
  worker_modes modes;           // the workers that observe (feature observe)
  server_limits limits;
  std::shared_ptr<boost::asio::ssl::context> tls;     // set: every connection is TLS
  access_control access;                              // the HTTP side: API, dashboard, metrics
  static constexpr std::int64_t kMaxDashboards = 64;  // live dashboard sockets
  std::atomic<std::int64_t> dashboards_open{0};
  // The open dashboards, for close_all (weak: a session's lifetime is its own async chain).
  void add_dashboard(std::weak_ptr<dashboard_session> d);
  // The protocol features the welcome lists; a feature's behaviour is off unless listed.
  std::vector<std::string> features;
  bool has(std::string_view feature) const {
    return std::find(features.begin(), features.end(), feature) != features.end();
  }
  // The cluster this daemon is one server of (docs/scaling.md): a worker of a swarm the ring
  // gives another server is refused with not_owner. None: every swarm is this daemon's.
  std::optional<cluster::membership> cluster;
  std::function<void()> nudge_checkpoint;  // asks for a checkpoint now
  std::atomic<bool> stopping{false};
  // Called (on the closing session's thread) when the last connection has closed while
  // `stopping`: the drain is over. Set before the I/O threads run, cleared after they stop.
  std::function<void()> on_drained;

 private:
  std::mutex dashboards_mu_;  // guards dashboards_
  std::vector<std::weak_ptr<dashboard_session>> dashboards_;

 public:
  // Queues `frame` to every session of `swarm` but `except` (and, when `only` is not empty, only
  // to the sessions of the workers it names). Copies the weak_ptrs under the registry lock and
  // sends after releasing it. Returns the sessions it queued to.
  std::size_t broadcast(std::string_view swarm, const std::shared_ptr<const std::string>& frame,
                        const websocket_session* except = nullptr,
                        const std::vector<std::string>& only = {});
  // Checkpoint `epoch` is durable (from the checkpointer thread): tells the sessions that wait
  // for it or an earlier one, and no other.
  void on_durable(std::uint64_t epoch);
  // Closes every session, workers' and dashboards', with 1001 going away (shutdown).
  void close_all();
  // A counted connection has closed (metrics.connections_open goes down by one).
  void connection_closed();
};

}  // namespace loopguard::daemon
