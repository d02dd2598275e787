#include "server/dashboard_session.hpp"

#include <boost/asio/dispatch.hpp>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"
#include "server/http_api.hpp"

namespace loopguard::daemon {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;

dashboard_session::dashboard_session(tls::stream&& stream, beast::flat_buffer&& already_read,
                                     std::shared_ptr<server_context> ctx)
    : ws_(std::move(stream)), ctx_(std::move(ctx)), timer_(ws_.get_executor()) {
  // What the browser sent behind its upgrade request is read first (buffered_stream.hpp).
  auto& front = ws_.next_layer().buffer();
  const auto n = already_read.size();
  front.commit(net::buffer_copy(front.prepare(n), already_read.data()));
}

dashboard_session::~dashboard_session() {
  --ctx_->dashboards_open;
}

void dashboard_session::run(beast::http::request<beast::http::string_body> req) {
  // The credentials it was let in with, checked again on every tick: a logout or an expired
  // session ends the live view too.
  authorization_ = std::string(req[beast::http::field::authorization]);
  cookie_ = std::string(req[beast::http::field::cookie]);
  websocket::stream_base::timeout t =
      websocket::stream_base::timeout::suggested(beast::role_type::server);
  ws_.set_option(t);  // pings a silent browser, closes a dead one
  ws_.read_message_max(kMaxMessage);
  ws_.text(true);
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(beast::http::field::server, "loopguardd"); }));
  ws_.async_accept(req,
                   beast::bind_front_handler(&dashboard_session::on_accept, shared_from_this()));
}

void dashboard_session::on_accept(beast::error_code ec) {
  if (ec) return;
  ctx_->add_dashboard(weak_from_this());
  send_if_changed();
  timer_.expires_after(kPeriod);
  timer_.async_wait(beast::bind_front_handler(&dashboard_session::on_tick, shared_from_this()));
  do_read();
}

void dashboard_session::do_read() {
  ws_.async_read(buffer_,
                 beast::bind_front_handler(&dashboard_session::on_read, shared_from_this()));
}

// Anything but a well-formed select is ignored: the page is ours, a stranger gains nothing.
void dashboard_session::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    closed_ = true;
    timer_.cancel();
    return;
  }
  const auto data = buffer_.data();
  const std::string_view text(static_cast<const char*>(data.data()), data.size());
  if (auto doc = json_input::parse(text); doc && doc->value.is_object()) {
    const auto& j = doc->value;
    const auto type = j.find("type");
    const auto swarm = j.find("swarm");
    if (type != j.end() && *type == "select" && swarm != j.end() && swarm->is_string() &&
        utf8::is_valid(swarm->get_ref<const std::string&>())) {
      selected_ = swarm->get<std::string>();
      last_sent_.clear();  // always answer a selection
      send_if_changed();
    }
  }
  buffer_.consume(buffer_.size());
  do_read();
}

void dashboard_session::on_tick(beast::error_code ec) {
  if (ec || closed_) return;
  if (ctx_->stopping) {
    closed_ = true;
    return ws_.async_close(websocket::close_code::going_away,
                           [self = shared_from_this()](beast::error_code) {});
  }
  if (!access_control::admits(
          ctx_->access.check(authorization_, cookie_, access_control::clock::now()))) {
    closed_ = true;
    return ws_.async_close(websocket::close_reason(websocket::close_code::policy_error,
                                                   "the session ended: log in again"),
                           [self = shared_from_this()](beast::error_code) {});
  }
  send_if_changed();
  timer_.expires_after(kPeriod);
  timer_.async_wait(beast::bind_front_handler(&dashboard_session::on_tick, shared_from_this()));
}

void dashboard_session::shut_down() {
  net::post(ws_.get_executor(), [self = shared_from_this()] {
    if (self->closed_) return;
    self->closed_ = true;
    self->timer_.cancel();
    self->ws_.async_close(websocket::close_code::going_away, [self](beast::error_code) {});
  });
}

void dashboard_session::send_if_changed() {
  if (writing_ || closed_) return;  // the next tick sends what is newest then
  const api_extras extras{&ctx_->detections, &ctx_->modes, &ctx_->registry};
  nlohmann::json snapshot = swarms_json(ctx_->service, extras);
  snapshot["type"] = "snapshot";
  snapshot["selected"] = selected_;
  auto detail = selected_.empty() ? std::nullopt : swarm_json(selected_, ctx_->service, extras);
  snapshot["swarm"] = detail ? std::move(*detail) : nlohmann::json(nullptr);
  std::string frame = json_input::dump(snapshot);
  if (frame == last_sent_) return;
  last_sent_ = frame;
  writing_frame_ = std::move(frame);
  writing_ = true;
  ws_.async_write(net::buffer(writing_frame_),
                  beast::bind_front_handler(&dashboard_session::on_write, shared_from_this()));
}

void dashboard_session::on_write(beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    closed_ = true;
    timer_.cancel();
  }
}

}  // namespace loopguard::daemon
