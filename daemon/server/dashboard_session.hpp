// One browser's live view (GET /api/live, docs/operations.md "Dashboard"): a WebSocket on
// which the daemon sends a snapshot of the swarms, and of the swarm the page selected, at once,
// after each selection and whenever it changed (checked every kPeriod). The page sends only
// `{"type":"select","swarm":"S"}`. One write in flight: a slow browser gets the newest snapshot
// when it is ready again, never a queue. Access and Origin are checked before the upgrade
// (http_session).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "server/buffered_stream.hpp"
#include "server/server_context.hpp"

namespace loopguard::daemon {

class dashboard_session : public std::enable_shared_from_this<dashboard_session> {
 public:
  static constexpr std::chrono::milliseconds kPeriod{250};
  static constexpr std::size_t kMaxMessage = 4096;  // a select message

  dashboard_session(tls::stream&& stream, boost::beast::flat_buffer&& already_read,
                    std::shared_ptr<server_context> ctx);
  ~dashboard_session();
  // `req` was let in by http_session::upgrade_live, which counted it in dashboards_open.
  void run(boost::beast::http::request<boost::beast::http::string_body> req);
  // Closes with 1001 going away (the daemon stops); from any thread.
  void shut_down();

 private:
  void on_accept(boost::beast::error_code ec);
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  void on_tick(boost::beast::error_code ec);
  void send_if_changed();
  void on_write(boost::beast::error_code ec, std::size_t bytes);

  boost::beast::websocket::stream<buffered_tcp_stream> ws_;
  std::shared_ptr<server_context> ctx_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer timer_;
  std::string authorization_, cookie_;
  std::string selected_;
  std::string last_sent_, writing_frame_;
  bool writing_ = false, closed_ = false;
};

}  // namespace loopguard::daemon
