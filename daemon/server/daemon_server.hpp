// One loopguardd: the store, the swarm service, the checkpointer, the listener and the I/O
// threads, in the order the lifecycle needs them (docs/operations.md):
//   open()          open and check the database, restore the state, bind the port;
//   run()           serve on `threads` threads (the calling one included) until a stop
//                   request has drained;
//   request_stop()  from any thread: stop accepting, close every session with 1001, and end
//                   the drain when the last session has closed or after the drain timeout;
//   finish()        the final checkpoint.
// main() parses flags and wires SIGTERM/SIGINT to request_stop(); tests drive it in-process.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "loopguard/status.hpp"
#include "server/daemon_config.hpp"
#include "service/checkpointer.hpp"
#include "service/daemon_metrics.hpp"
#include "service/swarm_service.hpp"

namespace loopguard::daemon {

class listener;
class sqlite_checkpoint_store;
struct server_context;

// The state options a daemon of this configuration runs with (its protocol features).
state_options state_options_of(const daemon_config& c);

struct daemon_options {
  static constexpr std::chrono::milliseconds kDrainTimeout{2000};
  std::string db = "./loopguard.db";
  boost::asio::ip::tcp::endpoint endpoint{boost::asio::ip::make_address("127.0.0.1"), 7070};
  daemon_config config;
  token_table tokens;         // empty: no token required
  std::string metrics_token;  // empty: /metrics is open
  // Set: the port serves only TLS (tls::server_context of --tls-cert / --tls-key).
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::optional<cluster::membership> cluster;  // none: this daemon owns every swarm
  int threads = 2;
  std::size_t compact_log_bytes = std::size_t{64} << 20;
  bool quick_check = true;
  std::chrono::milliseconds drain_timeout = kDrainTimeout;
};

class daemon_server {
 public:
  explicit daemon_server(daemon_options options);
  ~daemon_server();
  daemon_server(const daemon_server&) = delete;
  daemon_server& operator=(const daemon_server&) = delete;

  // Opens and restores the database, then binds the endpoint. The message names the file or
  // the endpoint (loopguardd exits 1 on it). Call once, before run().
  status open();
  // The bound endpoint (port 0 resolved); after a successful open().
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  bool requires_token() const { return !options_.tokens.empty(); }
  bool serves_tls() const { return options_.tls != nullptr; }
  // Serves until a stop request has drained. Handlers that throw are logged and serving goes
  // on. Call once, after open().
  void run();
  // Thread-safe; any number of times, before or during run().
  void request_stop();
  // After run(): writes the final checkpoint. An error when it failed (unacknowledged events
  // were not saved).
  status finish();

 private:
  status restore_state();
  void begin_drain();
  void flush_logs_every_second();
  static void fit_connections_to_descriptors(server_limits& limits);  // in open()
  void serve();                                                       // one I/O thread's loop

  daemon_options options_;
  std::unique_ptr<sqlite_checkpoint_store> store_;
  swarm_service service_;
  daemon_metrics metrics_;
  std::shared_ptr<server_context> ctx_;
  boost::asio::io_context ioc_;
  boost::asio::steady_timer drain_timer_;
  // Writes held-back log counts (daemon_log.hpp); on a strand of its own, so the cancel at
  // drain never races its handler re-arming it.
  boost::asio::steady_timer log_timer_;
  // Destroyed before the I/O context: its thread calls into sessions.
  std::unique_ptr<checkpointer> checkpointer_;
  std::shared_ptr<listener> listener_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace loopguard::daemon
