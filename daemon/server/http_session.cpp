#include "server/http_session.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include "loopguard/utf8.hpp"
#include "server/http_api.hpp"
#include "server/websocket_session.hpp"
#include "server/worker_url.hpp"

namespace loopguard::daemon {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

namespace {
constexpr std::size_t kMaxRequestBody = 1024;  // GET only: no request needs a body
}

http_session::http_session(net::ip::tcp::socket&& socket, std::shared_ptr<server_context> ctx)
    : stream_(std::move(socket)), ctx_(std::move(ctx)) {}

void http_session::run() {
  // Start on the connection's strand.
  net::dispatch(stream_.get_executor(),
                beast::bind_front_handler(&http_session::do_read, shared_from_this()));
}

void http_session::do_read() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(server_limits::kMaxHttpHeaderBytes));
  parser_->body_limit(kMaxRequestBody);
  stream_.expires_after(server_limits::kHttpTimeout);
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&http_session::on_read, shared_from_this()));
}

void http_session::on_read(beast::error_code ec, std::size_t) {
  if (ec) return;  // closed, timed out or malformed: drop the connection
  if (beast::websocket::is_upgrade(parser_->get())) return upgrade();
  const auto& req = parser_->get();
  respond(answer(req), req.keep_alive());
}

// Under the feature swarm_url only /ws is a worker path, and its query is checked here, before
// the handshake: a refused upgrade gets a plain HTTP answer and the connection closes.
void http_session::upgrade() {
  const std::string_view target = parser_->get().target();
  std::optional<std::string> swarm;
  if (ctx_->has(protocol::features::swarm_url)) {
    if (!is_worker_path(target)) {
      return respond(json_error(404, "not found: workers connect to " + std::string(kWorkerPath)),
                     false);
    }
    auto named = url_swarm(target);
    if (!named) return respond(json_error(400, named.error().message()), false);
    swarm = std::move(*named);
  }
  stream_.expires_never();
  std::make_shared<websocket_session>(stream_.release_socket(), std::move(buffer_), ctx_)
      ->run(parser_->release(), std::move(swarm));
}

// No exception leaves a handler: the request that failed gets a 500, the daemon goes on.
http_reply http_session::answer(const http::request<http::string_body>& req) {
  try {
    return route(req.method_string(), req.target(), ctx_->service, ctx_->metrics,
                 &ctx_->detections, &ctx_->modes);
  } catch (const std::exception& e) {
    spdlog::error("internal error answering {} {}: {}", std::string(req.method_string()),
                  utf8::repair(req.target()), utf8::repair(e.what()));
    return {500, "application/json", "{\"error\":\"internal error\"}\n"};
  }
}

void http_session::respond(http_reply r, bool keep_alive) {
  const auto& req = parser_->get();
  http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
  res.set(http::field::server, "loopguardd");
  res.set(http::field::content_type, r.content_type);
  res.keep_alive(keep_alive);
  if (req.method() != http::verb::head) res.body() = std::move(r.body);
  res.prepare_payload();
  beast::async_write(
      stream_, http::message_generator(std::move(res)),
      beast::bind_front_handler(&http_session::on_write, shared_from_this(), keep_alive));
}

void http_session::on_write(bool keep_alive, beast::error_code ec, std::size_t) {
  if (ec) return;
  if (!keep_alive) {
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
    return;
  }
  do_read();
}

}  // namespace loopguard::daemon
