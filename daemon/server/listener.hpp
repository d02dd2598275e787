// Accepts TCP connections on one endpoint and starts an http_session on its own strand for
// each.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "loopguard/status.hpp"
#include "server/server_context.hpp"

namespace loopguard::daemon {

class listener : public std::enable_shared_from_this<listener> {
 public:
  listener(boost::asio::io_context& ioc, std::shared_ptr<server_context> ctx);
  // Binds and listens; on failure, a message naming the step and the endpoint.
  status open(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void run();
  void stop();  // thread-safe: closes the acceptor on its executor

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  static constexpr std::chrono::milliseconds kAcceptPause{100};
  static bool out_of_resources(const boost::beast::error_code& ec);

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer pause_;  // accepting paused: out of descriptors
  std::shared_ptr<server_context> ctx_;
};

}  // namespace loopguard::daemon
