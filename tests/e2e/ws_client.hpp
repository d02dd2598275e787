// A WebSocket worker for tests and the load generator: connects to loopguardd on loopback,
// reads on its own I/O thread into a queue, writes through a queue (one write in flight).
// Every wait has a timeout.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace loopguard::test {

class ws_client {
 public:
  // Connects and completes the handshake on `target` (e.g. "/ws?swarm=s"); throws on failure.
  explicit ws_client(unsigned short port, const std::string& target = "/ws");
  // With extra request headers on the handshake (e.g. Origin, Cookie).
  ws_client(unsigned short port, const std::string& target,
            const std::vector<std::pair<std::string, std::string>>& headers);
  ~ws_client();
  ws_client(const ws_client&) = delete;
  ws_client& operator=(const ws_client&) = delete;

  // Queues a frame; returns at once.
  void send(std::string frame, bool binary = false);
  void send(const nlohmann::json& j) { send(j.dump()); }

  // The next received message, nullopt on timeout or after the close.
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout);
  // Skips messages until one with "type" == type (others are dropped unless keep is set).
  std::optional<nlohmann::json> next_of(const std::string& type, std::chrono::milliseconds timeout);
  // Waits until an ack with seq >= seq; false on timeout.
  bool wait_ack(std::uint64_t seq, std::chrono::milliseconds timeout);
  std::uint64_t last_ack() const;
  // Waits until the peer closed the connection; the close code, or nullopt on timeout.
  std::optional<int> wait_closed(std::chrono::milliseconds timeout);
  // All messages of `type` received so far (kept by every wait).
  std::vector<nlohmann::json> received(const std::string& type) const;

  // hello -> welcome; returns welcome.last_ack, or nullopt.
  std::optional<std::uint64_t> hello(const std::string& swarm, const std::string& worker,
                                     const std::string& incarnation, const std::string& token = "");

 private:
  void do_read();
  void do_write();

  boost::asio::io_context ioc_;
  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::beast::flat_buffer buffer_;
  std::deque<std::pair<std::string, bool>> out_;  // io thread only
  bool writing_ = false;
  mutable std::mutex mu_;  // guards in_, all_, closed_, close_code_, acked_
  std::condition_variable cv_;
  std::deque<nlohmann::json> in_;
  std::vector<nlohmann::json> all_;
  bool closed_ = false;
  int close_code_ = 0;
  std::uint64_t acked_ = 0;
  std::thread thread_;
};

// A WebSocket upgrade request on `target`, then closes: the HTTP status of the answer (101 when
// the upgrade was accepted) and its body.
int try_upgrade(unsigned short port, const std::string& target, std::string& body);

// One blocking HTTP GET against loopback; returns the status and the body.
int http_get(unsigned short port, const std::string& target, std::string& body);

// Any request against loopback, with headers and a body.
struct http_answer {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string header(std::string_view name) const;  // the first of that name, or ""
};
http_answer http_request(unsigned short port, const std::string& method, const std::string& target,
                         const std::vector<std::pair<std::string, std::string>>& headers = {},
                         const std::string& body = {});

// A WebSocket upgrade with headers: the HTTP status of the answer (101: accepted).
int try_upgrade(unsigned short port, const std::string& target,
                const std::vector<std::pair<std::string, std::string>>& headers, std::string& body);

}  // namespace loopguard::test
