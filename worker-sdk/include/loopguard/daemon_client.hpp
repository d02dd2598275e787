// daemon_client: one worker's connection to loopguardd (docs/protocol.md, docs/sdk.md "Swarm
// mode"). It streams judged calls to the daemon and brings back the swarm's verdicts.
//
// It never slows the agent: send() and report() put a value in a bounded outbox under a short
// lock and return; a Beast WebSocket on an I/O thread (its own, or the caller's io_context)
// does the rest: hello / welcome, resend from the daemon's last acknowledged sequence number,
// batching with a small flush delay, reconnect with exponential backoff and jitter, heartbeats
// below the daemon's idle timeout. Whether the daemon is up, slow or gone, the agent carries on
// with local protection; the client catches up when the daemon is back.
//
// Nothing is lost silently: an event the outbox cannot hold (it holds at most `outbox` events
// not yet acknowledged) is dropped, counted in stats().overflow_dropped and declared to the
// daemon with a `gap` message; so is an event the daemon refuses (an error with its `seq`).
//
// Thread-safety: every public member may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "loopguard/protocol.hpp"
#include "loopguard/status.hpp"

namespace loopguard {

struct client_options {
  // ws://HOST:PORT, or wss://HOST:PORT for TLS (path /ws is added when there is none;
  // ?swarm=S is always added).
  std::string url;
  std::string token;
  // wss:// only: the PEM file of the CA certificate(s) the daemon's certificate must chain to;
  // empty: the system's CA paths. The certificate is always verified, for the URL's host.
  std::string ca_file;
  std::string swarm, worker;   // identifiers: valid UTF-8, 1..128 bytes
  std::string incarnation;     // empty: a random id, new for every client object
  std::size_t outbox = 10000;  // events held until acknowledged; beyond: dropped with a gap
  std::chrono::milliseconds flush_delay{2};  // how long a batch waits for more events
  std::chrono::milliseconds backoff_min{100}, backoff_max{5000};
  std::chrono::milliseconds heartbeat{10000};  // an empty batch when nothing was sent for this long
  bool report_detections = true;  // send local detections when the daemon lists `detections`
  // The hello says "mode": "observe" (the worker's manager only observes; feature observe).
  // swarm_worker::connect sets it from the manager's configuration.
  bool observe = false;
};

// Options from the environment over `base`: LOOPGUARD_DAEMON (url), LOOPGUARD_TOKEN,
// LOOPGUARD_SWARM, LOOPGUARD_WORKER, LOOPGUARD_CA_FILE. An error names the variable and what is
// wrong with it.
result<client_options> options_from_env(client_options base);
// Checks the identifiers, the URL (ws:// or wss://host:port[/path]), the sizes, and that the
// CA file (when given) can be read.
status validate(const client_options& o);

struct client_stats {
  std::uint64_t sent = 0;              // events handed to send() (each got a sequence number)
  std::uint64_t acknowledged = 0;      // highest sequence number the daemon acknowledged
  std::uint64_t resent = 0;            // events sent again after a reconnect
  std::uint64_t overflow_dropped = 0;  // events dropped because the outbox was full
  std::uint64_t refused_dropped = 0;   // events the daemon refused (error with seq)
  std::uint64_t charges_dropped = 0;   // charge events a daemon without feature cost cannot take
  std::uint64_t gaps_sent = 0;         // gap messages sent
  // Unacknowledged events declared lost because the daemon had expired this client's
  // incarnation (error incarnation_expired): the client went on as a new incarnation.
  std::uint64_t expired_dropped = 0;
  std::uint64_t incarnations = 1;     // incarnations used (a new one after each expiry)
  std::string incarnation;            // the current one
  std::uint64_t connects = 0;         // welcomes received
  std::uint64_t disconnects = 0;      // connections lost or closed by the daemon
  std::uint64_t verdicts = 0;         // verdict messages received
  std::uint64_t detections_sent = 0;  // local detections reported
  std::size_t outbox = 0;             // events waiting for an acknowledgement now
  bool connected = false;
  std::vector<std::string> features;  // of the last welcome
  std::string last_error;             // the last error frame or connection failure
  // unauthorized / unsupported_version / invalid_utf8, or the daemon's TLS certificate failed
  // verification (last_error says why): no more reconnects.
  bool fatal = false;
};

class daemon_client {
 public:
  // Runs on a thread of its own.
  explicit daemon_client(client_options options);
  // Runs on `io`; the caller runs it. The io_context must outlive the client.
  daemon_client(client_options options, boost::asio::io_context& io);
  ~daemon_client();  // closes the connection; unacknowledged events are not waited for
  daemon_client(const daemon_client&) = delete;
  daemon_client& operator=(const daemon_client&) = delete;

  // Queues one judged call; `e.seq` is assigned here (1, 2, 3, ... per client). Never blocks on
  // the network. Returns the sequence number (the event may still be dropped by the overflow
  // policy: stats().overflow_dropped).
  std::uint64_t send(protocol::event e);
  // A local detection for the daemon's API; sent only when the daemon lists `detections`,
  // otherwise dropped. At most a few are held; older ones are dropped first.
  void report(protocol::detection d);

  // Verdicts received since the last call (a level-none verdict lifts an earlier one).
  std::vector<protocol::verdict> take_verdicts();
  // Whether the daemon said the swarm completed (swarm_complete) since the last call: every
  // verdict before it is void (take_verdicts() returns only those that came after it).
  bool take_swarm_complete();

  // Blocks until the daemon acknowledged `seq` (true), the client is fatally refused or the
  // timeout passes (false). For tools (replay, tests), never for an agent's hot path.
  bool wait_acknowledged(std::uint64_t seq, std::chrono::milliseconds timeout);
  // Blocks until at least `n` verdict messages were received in all, or the timeout passes.
  bool wait_verdicts(std::uint64_t n, std::chrono::milliseconds timeout);
  // Blocks until connected (a welcome came), or the timeout passes.
  bool wait_connected(std::chrono::milliseconds timeout);

  client_stats stats() const;
  const client_options& options() const;

 private:
  struct impl;
  struct runner;  // the own I/O thread, when there is one
  std::shared_ptr<impl> impl_;
  std::unique_ptr<runner> runner_;
};

}  // namespace loopguard
