#include "server/listener.hpp"

#include "service/daemon_log.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <sstream>

#include "server/http_session.hpp"

namespace loopguard::daemon {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

listener::listener(net::io_context& ioc, std::shared_ptr<server_context> ctx)
    : ioc_(ioc),
      acceptor_(net::make_strand(ioc)),
      pause_(acceptor_.get_executor()),
      ctx_(std::move(ctx)) {}

bool listener::out_of_resources(const beast::error_code& ec) {
  return ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open ||
         ec == boost::system::errc::too_many_files_open_in_system ||
         ec == net::error::no_buffer_space || ec == net::error::no_memory;
}

status listener::open(const tcp::endpoint& endpoint) {
  beast::error_code ec;
  const auto failed = [&](const char* what) {
    std::ostringstream where;
    where << endpoint;
    return status::error(std::string(what) + " " + where.str() + ": " + ec.message());
  };
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) return failed("cannot open a socket for");
  acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return failed("cannot set SO_REUSEADDR on");
  acceptor_.bind(endpoint, ec);
  if (ec) return failed("cannot bind");
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return failed("cannot listen on");
  return {};
}

void listener::run() {
  do_accept();
}

void listener::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
    self->pause_.cancel();
  });
}

void listener::do_accept() {
  // Each connection gets its own strand: its handlers never run concurrently.
  acceptor_.async_accept(net::make_strand(ioc_),
                         beast::bind_front_handler(&listener::on_accept, shared_from_this()));
}

void listener::on_accept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;  // stopped
  if (ec) {
    logs::emit(spdlog::level::warn, "accept_failed", "accept: " + ec.message());
    if (out_of_resources(ec)) {
      // Out of descriptors (or memory): retrying at once would spin. Pause, and meanwhile serve
      // the connections already open; a closing one gives a descriptor back.
      ++ctx_->metrics.accept_pauses;
      pause_.expires_after(kAcceptPause);
      pause_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
        if (!wait_ec && self->acceptor_.is_open()) self->do_accept();
      });
      return;
    }
  } else {
    // Acks and verdicts are small frames that must leave at once, not wait for Nagle.
    beast::error_code nodelay_ec;
    socket.set_option(tcp::no_delay(true), nodelay_ec);
    std::make_shared<http_session>(std::move(socket), ctx_)->run();
  }
  do_accept();
}

}  // namespace loopguard::daemon
