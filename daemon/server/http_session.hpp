// One HTTP connection, plain or TLS (tls::stream; with --tls-cert the TLS handshake comes first,
// within kHandshakeTimeout): answers requests (http_api) until the peer closes, or hands the
// stream to a websocket_session (or dashboard_session) on an upgrade request.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <memory>
#include <optional>

#include "loopguard/tls_stream.hpp"
#include "server/http_api.hpp"
#include "server/server_context.hpp"

namespace loopguard::daemon {

class http_session : public std::enable_shared_from_this<http_session> {
 public:
  http_session(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<server_context> ctx);
  void run();

 private:
  void handshake();
  void on_handshake(boost::beast::error_code ec);
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  // Hands the socket to a websocket_session, or answers why the upgrade is refused.
  void upgrade();
  void upgrade_live();  // the dashboard's socket
  using request = boost::beast::http::request<boost::beast::http::string_body>;
  http_reply answer(const request& req);
  http_reply front_door(const request& req);  // access, then the routes
  void respond(http_reply r, bool keep_alive);
  void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
  void close();  // after the last answer: TLS close_notify when TLS, then TCP's FIN

  tls::stream stream_;
  std::shared_ptr<server_context> ctx_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
};

}  // namespace loopguard::daemon
