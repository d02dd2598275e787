// One worker's WebSocket: hello/welcome, event batches, acks once durable, verdict pushes.
// Everything runs on the connection's strand; send(), on_durable() and shut_down() may be
// called from any thread and post to it. One write in flight; a bounded queue behind it.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "loopguard/protocol.hpp"
#include "server/buffered_stream.hpp"
#include "server/rate_limiter.hpp"
#include "server/server_context.hpp"

namespace loopguard::daemon {

class websocket_session : public std::enable_shared_from_this<websocket_session> {
 public:
  // `stream`: the connection, TLS handshake done when it is TLS. `already_read`: bytes read
  // from it past the HTTP upgrade request; they are the first bytes of the WebSocket stream.
  websocket_session(tls::stream&& stream, boost::beast::flat_buffer&& already_read,
                    std::shared_ptr<server_context> ctx);
  ~websocket_session();

  // `url_swarm`: the swarm the URL named (/ws?swarm=S, feature swarm_url); a hello of another
  // swarm is refused.
  void run(boost::beast::http::request<boost::beast::http::string_body> req,
           std::optional<std::string> url_swarm = std::nullopt);
  void send(std::shared_ptr<const std::string> frame);
  // The worker its hello named; empty before the hello. Set once, before the session joins the
  // registry, and never changed: any thread that found the session there may read it.
  std::string_view worker() const {
    return id_ ? std::string_view(id_->worker) : std::string_view();
  }
  void on_durable(std::uint64_t epoch);
  void shut_down();

 private:
  using close_code = boost::beast::websocket::close_code;

  void on_accept(boost::beast::error_code ec);
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  void handle(protocol::message&& m);
  void handle_frame(std::string_view bytes, bool text);
  void on_hello(protocol::hello&& m);
  std::optional<protocol::error> refuse_hello(const protocol::hello& m) const;
  std::optional<protocol::error> refuse_token(const protocol::hello& m) const;
  // not_owner when this daemon is one of a cluster and the ring gives `swarm` another server.
  std::optional<protocol::error> refuse_owner(std::string_view swarm) const;
  void send_active_verdicts();
  void on_events(protocol::events& m);
  bool for_me(const protocol::verdict& v) const;  // v.to is empty or names this worker
  void on_gap(const protocol::gap& m);
  void on_complete(const protocol::swarm_complete& m);
  void on_detection(protocol::detection&& m);
  void acknowledge(std::uint64_t durable_epoch);
  // Asks ctx_->ack_waiters to be told when the oldest unacknowledged epoch is durable, unless
  // it asked already (told once, it asks again from acknowledge() for what is left).
  void await_durable();
  void queue(std::shared_ptr<const std::string> frame);
  void do_write();
  void on_write(boost::beast::error_code ec, std::size_t bytes);
  void fail_with(const protocol::error& e, close_code code);
  void tear_down();      // the close deadline passed: the socket is closed without a handshake
  void pause_reading();  // over the event rate: the next read waits (back-pressure)
  // One log line each (docs/operations.md, "Logs").
  void log_refusal(std::string_view code, std::string_view swarm, std::string_view worker);
  void log_verdict(const protocol::verdict& v) const;
  void start_idle_timer();
  void on_idle(boost::beast::error_code ec);

  boost::beast::websocket::stream<buffered_tcp_stream> ws_;
  std::shared_ptr<server_context> ctx_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer read_pause_;  // back-pressure: the next read waits on it
  rate_limiter rate_;
  std::chrono::steady_clock::duration pause_{};  // set by on_events, taken by on_read
  bool paused_ = false;                          // a read waits on read_pause_: not idle
  std::chrono::steady_clock::time_point last_activity_;
  std::deque<std::shared_ptr<const std::string>> queue_;  // front is in flight when writing_
  bool writing_ = false;
  bool closing_ = false;
  bool counted_ = false;  // holds one of the max_connections slots
  std::optional<close_code> close_after_;
  std::optional<worker_identity> id_;  // set by hello
  bool may_complete_ = true;           // the hello's token grants swarm_complete (or no tokens)
  std::optional<std::string> url_swarm_;
  // Counted as connected by the service's retention since the hello; detached on close.
  bool attached_ = false;
  struct unacked {
    std::uint64_t epoch;                             // durable once this epoch is
    std::uint64_t seq;                               // acknowledges up to this sequence number
    std::chrono::steady_clock::time_point received;  // for the ack latency histogram
  };
  std::deque<unacked> unacked_;  // ascending
  // In ctx_->ack_waiters, or an acknowledge() posted for it: at most one of each at a time.
  bool awaiting_durable_ = false;
  std::uint64_t acked_ = 0;
};

}  // namespace loopguard::daemon
