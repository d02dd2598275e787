#include "server/websocket_session.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "loopguard/hex.hpp"
#include "loopguard/utf8.hpp"
#include "service/daemon_log.hpp"

namespace loopguard::daemon {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;

namespace {

std::shared_ptr<const std::string> frame_of(const protocol::message& m) {
  return std::make_shared<const std::string>(protocol::serialize(m));
}

}  // namespace

websocket_session::websocket_session(tls::stream&& stream, beast::flat_buffer&& already_read,
                                     std::shared_ptr<server_context> ctx)
    : ws_(std::move(stream)),
      ctx_(std::move(ctx)),
      idle_timer_(ws_.get_executor()),
      read_pause_(ws_.get_executor()),
      rate_(static_cast<double>(ctx_->limits.max_events_per_second),
            static_cast<double>(ctx_->limits.max_events_per_second),
            std::chrono::steady_clock::now()) {
  auto& front = ws_.next_layer().buffer();
  const auto n = already_read.size();
  front.commit(net::buffer_copy(front.prepare(n), already_read.data()));
}

websocket_session::~websocket_session() {
  if (attached_) ctx_->service.detach(*id_);
  if (id_) ctx_->registry.remove(id_->swarm, this);
  if (counted_) ctx_->connection_closed();
}

void websocket_session::run(beast::http::request<beast::http::string_body> req,
                            std::optional<std::string> url_swarm) {
  url_swarm_ = std::move(url_swarm);
  ++ctx_->metrics.connections_total;
  counted_ = true;
  const auto open = ++ctx_->metrics.connections_open;
  websocket::stream_base::timeout t{};
  t.handshake_timeout = server_limits::kHandshakeTimeout;
  t.idle_timeout = websocket::stream_base::none();  // our own idle timer says why it closes
  t.keep_alive_pings = false;
  ws_.set_option(t);
  ws_.read_message_max(ctx_->limits.max_frame * server_limits::kHardFrameFactor);
  ws_.text(true);
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(beast::http::field::server, "loopguardd"); }));
  const bool over_limit = static_cast<std::size_t>(open) > ctx_->limits.max_connections;
  ws_.async_accept(req, [self = shared_from_this(), over_limit](beast::error_code ec) {
    if (!ec && over_limit) {
      ++self->ctx_->metrics.connections_refused;
      self->log_refusal(protocol::codes::too_many_connections, "", "");
      return self->fail_with(
          {std::string(protocol::codes::too_many_connections),
           "the daemon holds its maximum of " + std::to_string(self->ctx_->limits.max_connections) +
               " connections; retry later"},
          close_code::try_again_later);
    }
    // A cluster's swarm that the URL names is refused before the hello: the worker reconnects
    // through the proxy, which routes it to the owner.
    if (!ec && self->url_swarm_) {
      if (auto refusal = self->refuse_owner(*self->url_swarm_)) {
        self->log_refusal(refusal->code, *self->url_swarm_, "");
        return self->fail_with(*refusal, close_code::try_again_later);
      }
    }
    self->on_accept(ec);
  });
}

void websocket_session::on_accept(beast::error_code ec) {
  if (ec) return;  // handshake failed or timed out: nothing to tell
  last_activity_ = std::chrono::steady_clock::now();
  start_idle_timer();
  do_read();
}

void websocket_session::do_read() {
  ws_.async_read(buffer_,
                 beast::bind_front_handler(&websocket_session::on_read, shared_from_this()));
}

void websocket_session::on_read(beast::error_code ec, std::size_t bytes) {
  if (ec) {
    // Closed by the peer, reset, or too big for Beast (1009 sent by Beast). A write still stuck
    // on a peer that half-closed but never reads would hold the session for good: torn down.
    closing_ = true;
    idle_timer_.cancel();
    read_pause_.cancel();
    if (writing_) tear_down();
    return;
  }
  if (closing_) return;
  last_activity_ = std::chrono::steady_clock::now();
  if (bytes > ctx_->limits.max_frame) {
    return fail_with({std::string(protocol::codes::frame_too_large),
                      "a frame holds at most " + std::to_string(ctx_->limits.max_frame) +
                          " bytes, got " + std::to_string(bytes)},
                     close_code::too_big);
  }
  const auto data = buffer_.data();
  const std::string_view frame(static_cast<const char*>(data.data()), data.size());
  // No exception leaves a handler: one bad message costs its own connection, never the daemon.
  try {
    handle_frame(frame, ws_.got_text());
  } catch (const std::exception& e) {
    logs::emit(spdlog::level::err, "internal_error",
               "internal error on a worker connection; the message was not applied",
               {{"swarm", id_ ? id_->swarm : std::string()},
                {"worker", id_ ? id_->worker : std::string()},
                {"error", e.what()}});
    fail_with(
        {std::string(protocol::codes::internal), "internal error; the message was not applied"},
        close_code::internal_error);
  }
  buffer_.consume(buffer_.size());
  if (closing_) return;
  if (pause_ > std::chrono::steady_clock::duration::zero()) return pause_reading();
  do_read();
}

void websocket_session::handle_frame(std::string_view bytes, bool text) {
  result<protocol::message> m = text ? protocol::parse(bytes) : [&]() -> result<protocol::message> {
    auto batch = protocol::decode_binary(bytes);
    if (!batch) return batch.error();
    return protocol::message(std::move(*batch));
  }();
  if (!m) {
    const status& e = m.error();
    protocol::error out{e.code(), e.message()};
    // An error about one event of a batch names it, so the worker can drop just that event.
    if (ctx_->has(protocol::features::error_seq)) {
      out.seq = protocol::failed_event_seq(bytes, !text, e);
    }
    return fail_with(out, e.code() == protocol::codes::batch_too_large ? close_code::too_big
                                                                       : close_code::policy_error);
  }
  handle(std::move(*m));
}

void websocket_session::handle(protocol::message&& m) {
  if (auto* h = std::get_if<protocol::hello>(&m)) return on_hello(std::move(*h));
  if (!id_) {
    return fail_with({std::string(protocol::codes::expected_hello),
                      "the first message must be hello, got " + std::string(type_name(m))},
                     close_code::policy_error);
  }
  if (auto* e = std::get_if<protocol::events>(&m)) return on_events(*e);
  if (auto* g = std::get_if<protocol::gap>(&m)) return on_gap(*g);
  if (auto* c = std::get_if<protocol::swarm_complete>(&m)) return on_complete(*c);
  auto* d = std::get_if<protocol::detection>(&m);
  if (d && ctx_->has(protocol::features::detections)) return on_detection(std::move(*d));
  fail_with({std::string(protocol::codes::bad_message),
             "a worker may not send " + std::string(type_name(m))},
            close_code::policy_error);
}

// Why a hello is refused (every code closes with 1008), or nothing.
std::optional<protocol::error> websocket_session::refuse_hello(const protocol::hello& m) const {
  using protocol::codes::bad_message;
  if (id_)
    return protocol::error{std::string(protocol::codes::duplicate_hello), "hello was already sent"};
  if (m.version != protocol::kVersion) {
    return protocol::error{std::string(protocol::codes::unsupported_version),
                           "this daemon speaks protocol version " +
                               std::to_string(protocol::kVersion) + ", got " +
                               std::to_string(m.version)};
  }
  if (auto refusal = refuse_token(m)) return refusal;
  if (url_swarm_ && *url_swarm_ != m.swarm) {
    return protocol::error{
        std::string(bad_message),
        "hello names swarm \"" + m.swarm + "\", but the URL names swarm \"" + *url_swarm_ + "\""};
  }
  return std::nullopt;
}

std::optional<protocol::error> websocket_session::refuse_owner(std::string_view swarm) const {
  if (!ctx_->cluster) return std::nullopt;
  // With tokens, a client is refused before its token is checked: it learns no address.
  std::string why = ctx_->cluster->refusal(swarm, ctx_->access.tokens().empty());
  if (why.empty()) return std::nullopt;
  return protocol::error{std::string(protocol::codes::not_owner), std::move(why)};
}

// Whether the hello's token grants its swarm and worker name (docs/operations.md, "Access").
std::optional<protocol::error> websocket_session::refuse_token(const protocol::hello& m) const {
  using protocol::codes::forbidden;
  const auto& tokens = ctx_->access.tokens();
  if (tokens.empty()) return std::nullopt;
  const auto* grant = tokens.find(m.token);
  if (grant == nullptr) {
    return protocol::error{std::string(protocol::codes::unauthorized), "missing or wrong token"};
  }
  if (!grant->grants_swarm(m.swarm)) {
    return protocol::error{
        std::string(forbidden),
        "the token \"" + grant->name + "\" does not grant swarm \"" + m.swarm + "\""};
  }
  if (!grant->grants_worker(m.worker)) {
    return protocol::error{
        std::string(forbidden),
        "the token \"" + grant->name + "\" does not grant worker name \"" + m.worker + "\""};
  }
  return std::nullopt;
}

void websocket_session::on_hello(protocol::hello&& m) {
  if (auto refusal = refuse_hello(m)) {
    log_refusal(refusal->code, m.swarm, m.worker);
    return fail_with(*refusal, close_code::policy_error);
  }
  if (auto refusal = refuse_owner(m.swarm)) {  // a worker whose URL named no swarm
    log_refusal(refusal->code, m.swarm, m.worker);
    return fail_with(*refusal, close_code::try_again_later);
  }
  if (const auto& tokens = ctx_->access.tokens(); !tokens.empty()) {
    may_complete_ = tokens.find(m.token)->may_complete();
  }
  worker_identity id{std::move(m.swarm), std::move(m.worker), std::move(m.incarnation)};
  // Retention: an expired incarnation is refused; a live one is never expired while connected.
  if (const status s = ctx_->service.attach(id); !s.ok()) {
    log_refusal(s.code(), id.swarm, id.worker);
    return fail_with({std::string(s.code()), s.message()}, close_code::policy_error);
  }
  attached_ = true;
  id_ = std::move(id);
  ctx_->registry.add(id_->swarm, this, weak_from_this());
  if (ctx_->has(protocol::features::observe)) {
    ctx_->modes.set(id_->swarm, id_->worker, m.observing);
  }
  protocol::welcome w;
  w.last_ack = ctx_->service.durable_seq(*id_);
  w.max_frame = ctx_->limits.max_frame;
  w.features = ctx_->features;
  acked_ = w.last_ack;
  queue(frame_of(w));
  if (ctx_->has(protocol::features::active_verdicts)) send_active_verdicts();
}

// What the worker missed while away: the swarm's active verdicts, oldest first, right after the
// welcome. A verdict declared meanwhile may also arrive as a push: verdicts are idempotent.
void websocket_session::send_active_verdicts() {
  auto active = ctx_->service.read(
      [&](const shared_economics_state& s) { return s.verdicts_as_pushed(id_->swarm); });
  // Leave room in the send queue: beyond half of it only the newest are sent.
  const std::size_t room = ctx_->limits.max_send_queue / 2;
  const std::size_t skip = active.size() > room ? active.size() - room : 0;
  std::size_t sent = 0;
  for (std::size_t i = skip; i < active.size(); ++i) {
    if (!for_me(active[i])) continue;
    queue(frame_of(active[i]));
    ++sent;
  }
  ctx_->metrics.verdicts_pushed += sent;
}

bool websocket_session::for_me(const protocol::verdict& v) const {
  return v.to.empty() || std::find(v.to.begin(), v.to.end(), id_->worker) != v.to.end();
}

void websocket_session::on_events(protocol::events& m) {
  // Without the feature costs are unknown fields (ignored, as protocol v1 does), and a charge
  // event would be miscounted as a call: refused.
  if (!ctx_->has(protocol::features::cost) && protocol::uses_cost(m)) {
    for (std::size_t i = 0; i < m.items.size(); ++i) {
      if (m.items[i].charge) {
        protocol::error out{std::string(protocol::codes::bad_message),
                            "events[" + std::to_string(i) +
                                "]: a worker may not send a charge event (feature cost is off)"};
        if (ctx_->has(protocol::features::error_seq)) out.seq = m.items[i].seq;
        return fail_with(out, close_code::policy_error);
      }
      m.items[i].spent = {};
    }
  }
  if (!ctx_->has(protocol::features::handoff)) {
    for (auto& e : m.items) e.peer.clear();  // an unknown field to this daemon
  }
  ++ctx_->metrics.batches;
  if (m.items.empty()) {
    // A heartbeat: answered with what is acknowledged so far, so every message gets an answer
    // and the worker hears that the daemon is alive. The worker is active (retention).
    ctx_->service.touch(*id_);
    return queue(frame_of(protocol::ack{acked_}));
  }
  ingest_result r = ctx_->service.ingest(*id_, m.items);
  pause_ = rate_.take(r.applied, std::chrono::steady_clock::now());  // resent events are free
  ctx_->metrics.events_applied += r.applied;
  ctx_->metrics.events_duplicate += r.duplicates;
  if (r.applied + r.duplicates > 0) {
    unacked_.push_back({r.epoch, r.last_seq, std::chrono::steady_clock::now()});
    await_durable();
    if (ctx_->nudge_checkpoint) ctx_->nudge_checkpoint();  // group commit: the ack waits on it
  }
  // The sender's own copy is queued here, on its strand, before anything else can be: the
  // ack of this batch (posted by the checkpointer, maybe already) always follows its verdicts.
  // The sender hears every verdict its batch caused (a hand-off verdict is for the workers of
  // its cycle, and for the worker whose hand-off changed it).
  for (const auto& v : r.verdicts) {
    log_verdict(v);
    const auto frame = frame_of(v);
    queue(frame);
    ++ctx_->metrics.verdicts_pushed;
    ctx_->metrics.verdicts_pushed += ctx_->broadcast(id_->swarm, frame, this, v.to);
  }
  if (!r.error.ok()) fail_with({r.error.code(), r.error.message()}, close_code::policy_error);
}

// Back-pressure: this connection is not read until its rate allows; TCP holds the worker back.
void websocket_session::pause_reading() {
  ++ctx_->metrics.read_pauses;
  ctx_->metrics.read_paused_us += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(pause_).count());
  read_pause_.expires_after(pause_);
  pause_ = {};
  paused_ = true;
  read_pause_.async_wait([self = shared_from_this()](beast::error_code ec) {
    self->paused_ = false;
    if (ec || self->closing_) return;
    self->last_activity_ = std::chrono::steady_clock::now();  // waiting on us is not idling
    self->do_read();
  });
}

void websocket_session::on_gap(const protocol::gap& m) {
  const auto epoch = ctx_->service.declare_gap(*id_, m.from, m.to);
  if (!epoch) {
    return fail_with({epoch.error().code(), epoch.error().message()}, close_code::policy_error);
  }
  ++ctx_->metrics.gaps;
  ctx_->metrics.events_lost += m.to - m.from + 1;
  unacked_.push_back({*epoch, m.to, std::chrono::steady_clock::now()});
  await_durable();
  if (ctx_->nudge_checkpoint) ctx_->nudge_checkpoint();
}

void websocket_session::on_complete(const protocol::swarm_complete& m) {
  if (!m.swarm.empty() && m.swarm != id_->swarm) {
    return fail_with({std::string(protocol::codes::bad_message),
                      "swarm_complete names swarm \"" + m.swarm +
                          "\", but this connection is of \"" + id_->swarm + "\""},
                     close_code::policy_error);
  }
  if (!may_complete_) {
    log_refusal(protocol::codes::forbidden, id_->swarm, id_->worker);
    return fail_with({std::string(protocol::codes::forbidden),
                      "this token may not end a swarm: swarm_complete needs a token with the "
                      "grant `complete` (or an admin token)"},
                     close_code::policy_error);
  }
  (void)ctx_->service.complete(id_->swarm);  // a swarm with no state here is not an error
  ctx_->detections.forget(id_->swarm);
  ++ctx_->metrics.swarms_completed;
  ctx_->broadcast(id_->swarm, frame_of(protocol::swarm_complete{id_->swarm}));
}

void websocket_session::on_detection(protocol::detection&& m) {
  ++ctx_->metrics.detections_reported;
  ctx_->detections.add(id_->swarm, id_->worker, std::move(m));
  ctx_->service.touch(*id_);  // activity, as a heartbeat is (retention)
}

void websocket_session::on_durable(std::uint64_t epoch) {
  net::post(ws_.get_executor(), [self = shared_from_this(), epoch] { self->acknowledge(epoch); });
}

void websocket_session::await_durable() {
  if (awaiting_durable_ || unacked_.empty()) return;
  const auto durable = ctx_->ack_waiters.wait(unacked_.front().epoch, weak_from_this());
  awaiting_durable_ = true;
  // Durable already (its commit was reported before this session asked): acknowledged from the
  // strand's queue, after what this handler queues (a batch's verdicts precede its ack).
  if (durable) on_durable(*durable);
}

void websocket_session::acknowledge(std::uint64_t epoch) {
  awaiting_durable_ = false;
  std::uint64_t up_to = acked_;
  const auto now = std::chrono::steady_clock::now();
  while (!unacked_.empty() && unacked_.front().epoch <= epoch) {
    up_to = std::max(up_to, unacked_.front().seq);
    ctx_->metrics.ack_latency.observe(
        std::chrono::duration<double>(now - unacked_.front().received).count());
    unacked_.pop_front();
  }
  await_durable();  // what a later commit holds
  if (up_to <= acked_ || closing_) return;
  acked_ = up_to;
  queue(frame_of(protocol::ack{up_to}));
}

void websocket_session::send(std::shared_ptr<const std::string> frame) {
  net::post(ws_.get_executor(), [self = shared_from_this(), f = std::move(frame)]() mutable {
    self->queue(std::move(f));
  });
}

void websocket_session::queue(std::shared_ptr<const std::string> frame) {
  if (closing_) return;
  if (queue_.size() >= ctx_->limits.max_send_queue) {
    return fail_with(
        {std::string(protocol::codes::send_queue_overflow),
         "the worker reads too slowly: " + std::to_string(queue_.size()) + " frames are waiting"},
        close_code::policy_error);
  }
  queue_.push_back(std::move(frame));
  if (!writing_) do_write();
}

void websocket_session::do_write() {
  if (queue_.empty()) {
    if (close_after_) {
      ws_.async_close(websocket::close_reason(*close_after_),
                      [self = shared_from_this()](beast::error_code) {});
      close_after_.reset();
    }
    return;
  }
  writing_ = true;
  ws_.async_write(net::buffer(*queue_.front()),
                  beast::bind_front_handler(&websocket_session::on_write, shared_from_this()));
}

void websocket_session::on_write(beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    closing_ = true;
    queue_.clear();
    idle_timer_.cancel();
    return;
  }
  queue_.pop_front();
  do_write();
}

void websocket_session::fail_with(const protocol::error& e, close_code code) {
  if (closing_) return;
  ++ctx_->metrics.errors_sent;
  // Keep only the frame in flight; the error is the last thing this worker hears.
  if (writing_) {
    queue_.erase(queue_.begin() + 1, queue_.end());
  } else {
    queue_.clear();
  }
  queue_.push_back(frame_of(e));
  closing_ = true;
  close_after_ = code;
  read_pause_.cancel();
  // Every close has a deadline: a peer that stopped reading never lets the error frame and the
  // close handshake through, and would hold its descriptor and a connection slot for good.
  idle_timer_.expires_after(server_limits::kCloseTimeout);
  idle_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->tear_down();
  });
  if (!writing_) do_write();
}

void websocket_session::log_refusal(std::string_view code, std::string_view swarm,
                                    std::string_view worker) {
  beast::error_code ec;
  const auto peer = beast::get_lowest_layer(ws_).socket().remote_endpoint(ec);
  logs::emit(spdlog::level::warn, "refused", "refused a worker connection: " + std::string(code),
             {{"code", std::string(code)},
              {"peer", ec ? std::string("?")
                          : peer.address().to_string() + ":" + std::to_string(peer.port())},
              {"swarm", std::string(swarm)},
              {"worker", std::string(worker)}});
}

void websocket_session::log_verdict(const protocol::verdict& v) const {
  const auto level = v.level == severity::none   ? spdlog::level::info  // lifted
                     : v.level == severity::warn ? spdlog::level::warn
                                                 : spdlog::level::err;
  logs::emit(level, "verdict", v.message,
             {{"swarm", id_->swarm},
              {"worker", id_->worker},
              {"kind", v.kind},
              {"severity", std::string(to_string(v.level))},
              {"tool", v.tool},
              {"fingerprint", to_hex(v.fingerprint)},
              {"calls", std::to_string(v.calls)},
              {"workers", std::to_string(v.workers)}});
}

void websocket_session::tear_down() {
  read_pause_.cancel();
  if (!beast::get_lowest_layer(ws_).socket().is_open()) return;  // it did close meanwhile
  ++ctx_->metrics.closes_forced;
  beast::get_lowest_layer(ws_).close();  // pending reads and writes end with an error
}

void websocket_session::shut_down() {
  net::post(ws_.get_executor(), [self = shared_from_this()] {
    self->fail_with({std::string(protocol::codes::shutting_down),
                     "the daemon is stopping; reconnect and resend unacknowledged events"},
                    close_code::going_away);
  });
}

void websocket_session::start_idle_timer() {
  idle_timer_.expires_at(last_activity_ + ctx_->limits.idle_timeout);
  idle_timer_.async_wait(
      beast::bind_front_handler(&websocket_session::on_idle, shared_from_this()));
}

void websocket_session::on_idle(beast::error_code ec) {
  if (ec || closing_) return;  // cancelled: the session is closing
  if (paused_ || std::chrono::steady_clock::now() - last_activity_ < ctx_->limits.idle_timeout) {
    return start_idle_timer();  // something arrived meanwhile, or the daemon holds it back
  }
  fail_with({std::string(protocol::codes::idle_timeout),
             "no message for " + std::to_string(ctx_->limits.idle_timeout.count()) + " ms"},
            close_code::policy_error);
}

}  // namespace loopguard::daemon
