#include "server/http_session.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/websocket.hpp>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"
#include "server/dashboard_session.hpp"
#include "server/http_api.hpp"
#include "server/websocket_session.hpp"
#include "server/worker_url.hpp"
#include "service/daemon_log.hpp"

namespace loopguard::daemon {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

namespace {

constexpr const char* kWorkerToken =
    "this is a worker's token, which grants swarms over /ws: the API and the dashboard take an "
    "admin token";
constexpr std::size_t kMaxRequestBody = 1024;  // the largest: POST /api/login's token
constexpr std::string_view kLivePath = "/api/live";
constexpr std::string_view kNameRefused =
    "this daemon has no token, so it answers the dashboard and the API only when addressed by IP "
    "address or as localhost (a name could be another site's, rebound to this address); "
    "configure a token (token_file) to serve them under a name";

std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

std::string_view header(const http::request<http::string_body>& req, http::field f) {
  const auto it = req.find(f);
  return it == req.end() ? std::string_view{} : std::string_view(it->value());
}

// A browser names the page's origin; one that is not this daemon's is another site's page.
// Requests without an Origin (curl, scripts, inspect) are not from a page.
bool foreign_origin(const http::request<http::string_body>& req) {
  const auto origin = header(req, http::field::origin);
  if (origin.empty()) return false;
  const std::string host(header(req, http::field::host));
  return origin != "http://" + host && origin != "https://" + host;
}

http_reply unauthorized(std::string_view why) {
  http_reply r = json_error(401, why);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"loopguardd\"");
  return r;
}

http_reply no_content(std::string cookie) {
  http_reply r{204, "text/plain", {}};
  r.headers.emplace_back("Set-Cookie", std::move(cookie));
  return r;
}

// POST /api/login: {"token": "..."} for the session cookie.
http_reply login(const http::request<http::string_body>& req, access_control& access) {
  if (header(req, http::field::content_type).substr(0, 16) != "application/json") {
    return json_error(415, "POST /api/login takes application/json: {\"token\": \"...\"}");
  }
  const auto doc = json_input::parse(req.body());
  const nlohmann::json* token = nullptr;
  if (doc && doc->value.is_object()) {
    const auto it = doc->value.find("token");
    if (it != doc->value.end() && it->is_string()) token = &*it;
  }
  if (token == nullptr) return json_error(400, "expected {\"token\": \"...\"}");
  const auto id = access.login(token->get_ref<const std::string&>(), access_control::clock::now());
  if (!id && id.error().code() == "forbidden") return json_error(403, id.error().message());
  if (!id) return unauthorized(id.error().message());
  if (id->empty()) return {204, "text/plain", {}};  // no token configured: nothing to hold
  return no_content(access_control::set_cookie(*id));
}

const char* grant_name(access_control::grant g) {
  switch (g) {
    case access_control::grant::open:
      return "none";
    case access_control::grant::bearer:
      return "bearer";
    case access_control::grant::cookie:
      return "cookie";
    case access_control::grant::worker:
    case access_control::grant::refused:
      break;
  }
  return "refused";
}

}  // namespace

http_session::http_session(net::ip::tcp::socket&& socket, std::shared_ptr<server_context> ctx)
    : stream_(ctx->tls ? tls::stream(beast::tcp_stream(std::move(socket)), *ctx->tls)
                       : tls::stream(beast::tcp_stream(std::move(socket)))),
      ctx_(std::move(ctx)) {}

void http_session::run() {
  // Start on the connection's strand.
  net::dispatch(stream_.get_executor(),
                beast::bind_front_handler(&http_session::handshake, shared_from_this()));
}

// A TLS handshake first, within its deadline: a client that connects and sends nothing, or a
// byte a second, is cut off. Plain TCP: goes on at once.
void http_session::handshake() {
  stream_.next_layer().expires_after(server_limits::kHandshakeTimeout);
  stream_.async_handshake(
      net::ssl::stream_base::server,
      beast::bind_front_handler(&http_session::on_handshake, shared_from_this()));
}

// A failed handshake (a plaintext client, one that does not trust the certificate, one too
// slow) is counted and logged (rate-limited: a scanner cannot flood the log), and the
// connection closed.
void http_session::on_handshake(beast::error_code ec) {
  if (!ec) return do_read();
  ++ctx_->metrics.tls_handshake_failures;
  beast::error_code peer_ec;
  const auto peer = stream_.next_layer().socket().remote_endpoint(peer_ec);
  logs::emit(
      spdlog::level::warn, "tls_handshake_failed",
      "TLS handshake failed: " +
          utf8::repair(ec == beast::error::timeout ? std::string("timed out") : ec.message()),
      {{"peer", peer_ec ? std::string("?")
                        : peer.address().to_string() + ":" + std::to_string(peer.port())}});
  stream_.next_layer().close();
}

void http_session::do_read() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(server_limits::kMaxHttpHeaderBytes));
  parser_->body_limit(kMaxRequestBody);
  // One deadline for the whole request, not per read: a client sending a byte at a time cannot
  // hold the connection past it.
  stream_.next_layer().expires_after(ctx_->limits.request_timeout);
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
  const auto& req = parser_->get();
  const std::string_view target = req.target();
  // A page of another site, or one reaching a tokenless daemon under a rebound name, may open no
  // socket at all: browsers always send Origin on an upgrade; workers (no browser) send none.
  if (foreign_origin(req)) {
    return respond(json_error(403, "the Origin is not this daemon's"), false);
  }
  if (!header(req, http::field::origin).empty() && !ctx_->access.required() &&
      !local_host(header(req, http::field::host))) {
    return respond(json_error(403, kNameRefused), false);
  }
  if (path_of(target) == kLivePath) return upgrade_live();
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
  stream_.next_layer().expires_never();
  std::make_shared<websocket_session>(std::move(stream_), std::move(buffer_), ctx_)
      ->run(parser_->release(), std::move(swarm));
}

// The dashboard's live socket: same origin (checked by upgrade()), the API's access, a bounded
// number of them.
void http_session::upgrade_live() {
  const auto& req = parser_->get();
  const auto grant =
      ctx_->access.check(header(req, http::field::authorization), header(req, http::field::cookie),
                         access_control::clock::now());
  if (grant == access_control::grant::worker) return respond(json_error(403, kWorkerToken), false);
  if (grant == access_control::grant::refused) {
    return respond(unauthorized("log in first: POST /api/login, or Authorization: Bearer"), false);
  }
  // Counted here, before the check: two upgrades on two threads cannot both pass it. The
  // session gives it back when it ends.
  if (++ctx_->dashboards_open > server_context::kMaxDashboards) {
    --ctx_->dashboards_open;
    return respond(json_error(503, "too many live dashboards open (" +
                                       std::to_string(server_context::kMaxDashboards) + ")"),
                   false);
  }
  stream_.next_layer().expires_never();
  std::make_shared<dashboard_session>(std::move(stream_), std::move(buffer_), ctx_)
      ->run(parser_->release());
}

// Open to all: /healthz, /readyz, and /metrics unless it has a token. Everything else under
// /api/ needs access when a token is configured (access_control).
http_reply http_session::front_door(const request& req) {
  const auto path = path_of(req.target());
  const bool get = req.method() == http::verb::get || req.method() == http::verb::head;
  const bool post = req.method() == http::verb::post;
  if (path == "/readyz" && get) {
    if (ctx_->stopping) return {503, "text/plain", "not ready: the daemon is stopping\n"};
    if (auto why = ctx_->metrics.durable.failure(); !why.empty()) {
      return {503, "text/plain", "not ready: checkpoints are failing: " + utf8::repair(why) + "\n"};
    }
    return {200, "text/plain", "ready\n"};
  }
  if (!ctx_->access.required() && (path == "/" || path.starts_with("/api/")) &&
      !local_host(header(req, http::field::host))) {
    return json_error(403, kNameRefused);
  }
  if (path == "/metrics" && get &&
      !ctx_->access.metrics_allowed(header(req, http::field::authorization))) {
    return unauthorized("/metrics needs its token: Authorization: Bearer <metrics token>");
  }
  if (path == "/api/login" || path == "/api/logout") {
    if (!post) return json_error(405, "use POST");
    if (foreign_origin(req)) return json_error(403, "the Origin is not this daemon's");
    if (path == "/api/logout") {
      ctx_->access.logout(header(req, http::field::cookie));
      return no_content(access_control::set_cookie(""));
    }
    return login(req, ctx_->access);
  }
  if (path.starts_with("/api/")) {
    const auto grant =
        ctx_->access.check(header(req, http::field::authorization),
                           header(req, http::field::cookie), access_control::clock::now());
    if (grant == access_control::grant::worker) return json_error(403, kWorkerToken);
    if (grant == access_control::grant::refused) {
      return unauthorized(ctx_->access.required() ? "this daemon needs its token: log in, or "
                                                    "send Authorization: Bearer <admin token>"
                                                  : "refused");
    }
    if (path == "/api/session" && get) {
      return {200, "application/json",
              std::string("{\"auth\":\"") + grant_name(grant) +
                  "\",\"required\":" + (ctx_->access.required() ? "true" : "false") + "}\n"};
    }
  }
  return route(req.method_string(), req.target(), ctx_->service, ctx_->metrics,
               {&ctx_->detections, &ctx_->modes, &ctx_->registry});
}

// No exception leaves a handler: the request that failed gets a 500, the daemon goes on.
http_reply http_session::answer(const http::request<http::string_body>& req) {
  try {
    return front_door(req);
  } catch (const std::exception& e) {
    logs::emit(spdlog::level::err, "internal_error", "internal error answering a request",
               {{"method", std::string(req.method_string())},
                {"target", std::string(req.target())},
                {"error", e.what()}});
    return {500, "application/json", "{\"error\":\"internal error\"}\n"};
  }
}

void http_session::respond(http_reply r, bool keep_alive) {
  const auto& req = parser_->get();
  http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
  res.set(http::field::server, "loopguardd");
  res.set(http::field::content_type, r.content_type);
  res.set(http::field::cache_control, "no-store");
  for (auto& [name, value] : r.headers) res.set(name, value);
  res.keep_alive(keep_alive);
  if (req.method() != http::verb::head) res.body() = std::move(r.body);
  res.prepare_payload();
  beast::async_write(
      stream_, http::message_generator(std::move(res)),
      beast::bind_front_handler(&http_session::on_write, shared_from_this(), keep_alive));
}

void http_session::on_write(bool keep_alive, beast::error_code ec, std::size_t) {
  if (ec) return;
  if (!keep_alive) return close();
  do_read();
}

void http_session::close() {
  auto* secure = stream_.tls();
  if (secure == nullptr) {
    beast::error_code ignored;
    stream_.next_layer().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    return;
  }
  // close_notify, then the peer's; bounded by the close deadline like every close.
  stream_.next_layer().expires_after(server_limits::kCloseTimeout);
  secure->async_shutdown(
      [self = shared_from_this()](beast::error_code) { self->stream_.next_layer().close(); });
}

}  // namespace loopguard::daemon
