// daemon_client: the I/O around the pure outbox. Everything below `impl` runs on one strand,
// except the public members, which touch only what `mu` guards.
#include "loopguard/daemon_client.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "client/daemon_url.hpp"
#include "client/error_policy.hpp"
#include "client/outbox.hpp"
#include "loopguard/hex.hpp"
#include "loopguard/tls_stream.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t kMaxDetectionsHeld = 64;
// The largest binary event: 5 u64 + flags + two length-prefixed strings at their limits.
constexpr std::size_t kMaxEventBytes =
    5 * 8 + 1 + 2 + protocol::kMaxToolBytes + 2 + protocol::kMaxSummaryBytes;
constexpr auto kConnectTimeout = std::chrono::seconds(5);
constexpr auto kDeadPeerTimeout = std::chrono::seconds(30);  // nothing heard: reconnect

std::string random_incarnation() {
  std::random_device rd;
  const std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
  return to_hex(v);
}

// What the daemon accepts, whatever the agent passed: content repaired and cut at a code-point
// boundary to the byte limits, a time that is a finite number.
void make_valid(protocol::event& e) {
  utf8::repair_in_place(e.tool);
  e.tool.resize(utf8::cut_point(e.tool, protocol::kMaxToolBytes));
  if (e.tool.empty()) e.tool = "?";
  utf8::repair_in_place(e.summary);
  e.summary.resize(utf8::cut_point(e.summary, protocol::kMaxSummaryBytes));
  if (!std::isfinite(e.t)) e.t = 0;
}

void make_valid(protocol::detection& d) {
  utf8::repair_in_place(d.tool);
  d.tool.resize(utf8::cut_point(d.tool, protocol::kMaxToolBytes));
  utf8::repair_in_place(d.message);
  d.message.resize(utf8::cut_point(d.message, protocol::kMaxDetectionMessageBytes));
  if (!utf8::is_identifier(d.detector) || d.detector.size() > 32) d.detector = "unknown";
  if (!std::isfinite(d.t)) d.t = 0;
}

}  // namespace

struct daemon_client::impl : std::enable_shared_from_this<impl> {
  using strand_t = net::strand<net::io_context::executor_type>;
  using ws_t = websocket::stream<tls::stream>;

  // One connection attempt; handlers of an older one find it is no longer `conn`. TLS when
  // `tls` is not null (wss://).
  struct connection {
    connection(strand_t& s, net::ssl::context* tls_context) : ws(s, tls_context) {}
    ws_t ws;
    beast::flat_buffer buffer;
    bool welcomed = false;
    bool writing = false;
    bool closed = false;
    bool pinging = false;
    bool got_error = false;  // an error frame came: it, not the close after it, is the reason
    std::string frame;       // the frame being written
    std::chrono::steady_clock::time_point last_received = std::chrono::steady_clock::now();
  };

  impl(client_options o, net::io_context& io)
      : options(std::move(o)),
        url(*client::parse_daemon_url(options.url)),
        strand(net::make_strand(io)),
        resolver(strand),
        flush_timer(strand),
        retry_timer(strand),
        heartbeat_timer(strand),
        box(options.outbox),
        rng(std::random_device{}()) {
    if (options.incarnation.empty()) options.incarnation = random_incarnation();
    incarnation = options.incarnation;
    stats.incarnation = incarnation;
    if (url.tls) {
      auto ctx = tls::client_context(options.ca_file);
      if (ctx) {
        tls_context = std::move(*ctx);
      } else {  // no connection can succeed: fatal, said once
        stats.fatal = true;
        stats.last_error = "TLS: " + ctx.error().message();
      }
    }
  }

  // --- public side (any thread) ---
  std::uint64_t send(protocol::event e);
  void report(protocol::detection d);
  void kick();
  template <class Pred>
  bool wait(std::chrono::milliseconds timeout, Pred p) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return p() || stats.fatal; }) && p();
  }

  // --- strand side ---
  void start();
  void stop();
  void connect();
  void on_resolved(beast::error_code ec, const tcp::resolver::results_type& results);
  void on_connected(const std::shared_ptr<connection>& c, beast::error_code ec);
  void on_tls_handshake(const std::shared_ptr<connection>& c, beast::error_code ec);
  void websocket_handshake(const std::shared_ptr<connection>& c);
  void on_handshake(const std::shared_ptr<connection>& c, beast::error_code ec);
  void read(const std::shared_ptr<connection>& c);
  void on_read(const std::shared_ptr<connection>& c, beast::error_code ec);
  void handle(const protocol::message& m);
  void on_welcome(const protocol::welcome& w);
  void on_error(const protocol::error& e);
  void pump();
  bool next_frame(std::string& frame, bool& binary);
  void write(std::string frame, bool binary);
  void on_written(const std::shared_ptr<connection>& c, beast::error_code ec);
  void arm_flush();
  void arm_heartbeat();
  void beat();
  void lost(const std::shared_ptr<connection>& c, const std::string& why);
  void schedule_reconnect();

  client_options options;
  client::daemon_url url;
  std::shared_ptr<net::ssl::context> tls_context;  // wss://: verifies the daemon's certificate
  strand_t strand;
  tcp::resolver resolver;
  net::steady_timer flush_timer, retry_timer, heartbeat_timer;

  // Guarded by mu.
  mutable std::mutex mu;
  std::condition_variable cv;
  client::outbox box;
  std::deque<protocol::verdict> inbox;
  std::deque<protocol::detection> detections;
  client_stats stats;
  std::uint64_t detections_dropped = 0;

  // Strand only.
  std::string incarnation;  // the hello's: options.incarnation until the daemon expires it
  std::shared_ptr<connection> conn;
  std::vector<std::string> features;
  std::size_t max_events = protocol::kMaxBatchEvents;
  bool flush_armed = false;
  bool stopping = false;
  unsigned attempt = 0;
  client::refusal_tracker refusals;
  std::chrono::steady_clock::time_point last_write{};
  std::minstd_rand rng;
  std::atomic<bool> wake_pending{false};
  std::atomic<bool> has_verdicts{false};
  std::atomic<bool> completed{false};  // a swarm_complete came since take_swarm_complete()  //
                                       // inbox is not empty: take_verdicts() needs the lock
};

// ---------------------------------------------------------------------------------------------
// Public side.

std::uint64_t daemon_client::impl::send(protocol::event e) {
  make_valid(e);
  std::uint64_t seq = 0;
  {
    std::lock_guard lock(mu);
    seq = box.push(std::move(e));
  }
  kick();
  return seq;
}

void daemon_client::impl::report(protocol::detection d) {
  if (!options.report_detections) return;
  make_valid(d);
  {
    std::lock_guard lock(mu);
    detections.push_back(std::move(d));
    if (detections.size() > kMaxDetectionsHeld) {
      detections.pop_front();
      ++detections_dropped;
    }
  }
  kick();
}

// One wake-up of the I/O thread per batch, not per event: `wake_pending` stays set until pump()
// takes the next batch, so the events pushed meanwhile ride along without a post each.
void daemon_client::impl::kick() {
  if (wake_pending.exchange(true)) return;
  net::post(strand, [self = shared_from_this()] { self->arm_flush(); });
}

// ---------------------------------------------------------------------------------------------
// Connecting.

void daemon_client::impl::start() {
  net::post(strand, [self = shared_from_this()] {
    self->connect();
    self->arm_heartbeat();
  });
}

void daemon_client::impl::stop() {
  net::post(strand, [self = shared_from_this()] {
    self->stopping = true;
    self->flush_timer.cancel();
    self->retry_timer.cancel();
    self->heartbeat_timer.cancel();
    self->resolver.cancel();
    if (self->conn) {
      // close(), not socket().close(): it cancels the stream's timeout timer too, which would
      // otherwise hold the I/O thread (and this destructor) until a connect or TLS handshake
      // deadline passes.
      beast::get_lowest_layer(self->conn->ws).close();
      self->conn->closed = true;
      // The WebSocket's own handshake timer goes with it (its handler holds a weak_ptr only).
      self->conn.reset();
    }
  });
}

void daemon_client::impl::connect() {
  if (stopping || (url.tls && !tls_context)) return;
  resolver.async_resolve(
      url.host, url.port,
      [self = shared_from_this()](beast::error_code ec, const tcp::resolver::results_type& r) {
        self->on_resolved(ec, r);
      });
}

void daemon_client::impl::on_resolved(beast::error_code ec,
                                      const tcp::resolver::results_type& results) {
  if (stopping) return;
  if (ec) {
    {
      std::lock_guard lock(mu);
      stats.last_error = "cannot resolve " + url.host + ": " + ec.message();
    }
    return schedule_reconnect();
  }
  auto c = std::make_shared<connection>(strand, tls_context.get());
  conn = c;
  beast::get_lowest_layer(c->ws).expires_after(kConnectTimeout);
  beast::get_lowest_layer(c->ws).async_connect(
      results, [self = shared_from_this(), c](beast::error_code e, const tcp::endpoint&) {
        self->on_connected(c, e);
      });
}

void daemon_client::impl::on_connected(const std::shared_ptr<connection>& c, beast::error_code ec) {
  if (c != conn || stopping) return;
  if (ec) return lost(c, "cannot connect to " + url.host_header() + ": " + ec.message());
  beast::get_lowest_layer(c->ws).socket().set_option(tcp::no_delay(true));
  auto* secure = c->ws.next_layer().tls();
  if (secure == nullptr) return websocket_handshake(c);
  // SNI and the host the certificate must be for; the handshake within the connect timeout.
  if (status s = tls::expect_host(*secure, url.host); !s.ok()) {
    {
      std::lock_guard lock(mu);
      stats.fatal = true;
    }
    return lost(c, s.message());
  }
  beast::get_lowest_layer(c->ws).expires_after(kConnectTimeout);
  c->ws.next_layer().async_handshake(
      net::ssl::stream_base::client,
      [self = shared_from_this(), c](beast::error_code e) { self->on_tls_handshake(c, e); });
}

// A certificate that fails verification will fail again: fatal, no reconnect loop, the reason
// in last_error. Any other failure (reset, timeout) is retried like a lost connection.
void daemon_client::impl::on_tls_handshake(const std::shared_ptr<connection>& c,
                                           beast::error_code ec) {
  if (c != conn || stopping) return;
  if (!ec) return websocket_handshake(c);
  bool verification = false;
  const std::string why = tls::handshake_failure(*c->ws.next_layer().tls(), ec, verification);
  if (verification) {
    std::lock_guard lock(mu);
    stats.fatal = true;
  }
  lost(c, "TLS handshake with " + url.host_header() + ": " + why);
}

void daemon_client::impl::websocket_handshake(const std::shared_ptr<connection>& c) {
  beast::get_lowest_layer(c->ws).expires_never();
  websocket::stream_base::timeout t{};
  t.handshake_timeout = kConnectTimeout;
  t.idle_timeout = websocket::stream_base::none();  // the heartbeat finds a dead peer
  t.keep_alive_pings = false;
  c->ws.set_option(t);
  // A raw pointer: the callback lives inside c->ws, so it never outlives the connection, and a
  // shared_ptr here would be a cycle (connection -> stream -> callback -> connection): a leak.
  c->ws.control_callback([raw = c.get()](websocket::frame_type, beast::string_view) {
    raw->last_received = std::chrono::steady_clock::now();
  });
  c->ws.async_handshake(
      url.host_header(), url.target(options.swarm),
      [self = shared_from_this(), c](beast::error_code e) { self->on_handshake(c, e); });
}

void daemon_client::impl::on_handshake(const std::shared_ptr<connection>& c, beast::error_code ec) {
  if (c != conn || stopping) return;
  if (ec) return lost(c, "WebSocket handshake with " + url.host_header() + ": " + ec.message());
  protocol::hello h;
  h.swarm = options.swarm;
  h.worker = options.worker;
  h.incarnation = incarnation;
  h.token = options.token;
  h.observing = options.observe;
  read(c);
  write(protocol::serialize(h), false);
}

void daemon_client::impl::lost(const std::shared_ptr<connection>& c, const std::string& why) {
  if (c->closed) return;
  c->closed = true;
  beast::get_lowest_layer(c->ws).close();  // the socket and its timeout timer
  flush_timer.cancel();
  flush_armed = false;
  {
    std::lock_guard lock(mu);
    if (stats.connected || c->welcomed) ++stats.disconnects;
    stats.connected = false;
    if (!c->got_error) stats.last_error = why;
  }
  cv.notify_all();
  schedule_reconnect();
}

void daemon_client::impl::schedule_reconnect() {
  bool fatal = false;
  {
    std::lock_guard lock(mu);
    fatal = stats.fatal;
  }
  if (stopping || fatal) return;
  // Exponential backoff with jitter: a random wait in [d/2, d], d = min * 2^attempt <= max.
  const auto cap = options.backoff_max.count();
  auto d = options.backoff_min.count();
  for (unsigned i = 0; i < attempt && d < cap; ++i) d *= 2;
  d = std::min<decltype(d)>(d, cap);
  ++attempt;
  std::uniform_int_distribution<long long> jitter(d / 2, d);
  retry_timer.expires_after(std::chrono::milliseconds(jitter(rng)));
  retry_timer.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->connect();
  });
}

// ---------------------------------------------------------------------------------------------
// Reading.

void daemon_client::impl::read(const std::shared_ptr<connection>& c) {
  c->ws.async_read(c->buffer, [self = shared_from_this(), c](beast::error_code ec, std::size_t) {
    self->on_read(c, ec);
  });
}

void daemon_client::impl::on_read(const std::shared_ptr<connection>& c, beast::error_code ec) {
  if (c != conn || stopping) return;
  if (ec) {
    const auto reason = c->ws.reason();
    return lost(c, ec == websocket::error::closed
                       ? "the daemon closed the connection (" + std::to_string(reason.code) + ")"
                       : "connection lost: " + ec.message());
  }
  c->last_received = std::chrono::steady_clock::now();
  const auto data = c->buffer.data();
  const std::string_view text(static_cast<const char*>(data.data()), data.size());
  auto m = protocol::parse(text);
  c->buffer.consume(c->buffer.size());
  if (!m) return lost(c, "the daemon sent a frame this client cannot read: " + m.error().message());
  handle(*m);
  if (c == conn && !c->closed) read(c);
}

void daemon_client::impl::handle(const protocol::message& m) {
  if (const auto* w = std::get_if<protocol::welcome>(&m)) return on_welcome(*w);
  if (const auto* e = std::get_if<protocol::error>(&m)) return on_error(*e);
  std::lock_guard lock(mu);
  if (const auto* a = std::get_if<protocol::ack>(&m)) {
    box.acknowledge(a->seq);
    stats.acknowledged = box.acknowledged();
    refusals.on_ack(a->seq);
  } else if (const auto* v = std::get_if<protocol::verdict>(&m)) {
    inbox.push_back(*v);
    has_verdicts = true;
    ++stats.verdicts;
  } else if (std::holds_alternative<protocol::swarm_complete>(m)) {
    inbox.clear();  // the verdicts before the completion are void
    completed = true;
  }
  cv.notify_all();
}

void daemon_client::impl::on_welcome(const protocol::welcome& w) {
  conn->welcomed = true;
  attempt = 0;
  features = w.features;
  max_events = std::clamp<std::size_t>(std::min(w.max_batch, w.max_frame / kMaxEventBytes), 1,
                                       protocol::kMaxBatchEvents);
  {
    std::lock_guard lock(mu);
    box.resume(w.last_ack);
    stats.acknowledged = box.acknowledged();
    stats.connected = true;
    stats.features = w.features;
    stats.last_error.clear();
    ++stats.connects;
  }
  cv.notify_all();
  pump();
}

void daemon_client::impl::on_error(const protocol::error& e) {
  conn->got_error = true;
  const client::error_class k = client::classify(e.code);
  std::lock_guard lock(mu);
  stats.last_error = e.code + ": " + e.message;
  if (k == client::error_class::fatal) stats.fatal = true;
  if (k == client::error_class::new_incarnation) {
    // The next connection is a new incarnation whose first message declares the old one's
    // numbers lost (docs/protocol.md, "Retention"): nothing is counted twice.
    incarnation = random_incarnation();
    stats.incarnation = incarnation;
    ++stats.incarnations;
    box.abandon();
    stats.expired_dropped = box.counters().abandoned;
  }
  if (k == client::error_class::per_event) {
    const std::uint64_t refuse =
        e.seq ? *e.seq : refusals.on_refusal(box.acknowledged(), box.oldest_event());
    if (refuse != 0 && box.refuse(refuse)) stats.refused_dropped = box.counters().refused_dropped;
  }
  cv.notify_all();
  // The daemon closes the connection after an error: the read fails next and we reconnect.
}

// ---------------------------------------------------------------------------------------------
// Writing.

void daemon_client::impl::arm_flush() {
  if (!conn || !conn->welcomed || conn->writing || flush_armed) return;
  if (options.flush_delay.count() == 0) return pump();
  flush_armed = true;
  flush_timer.expires_after(options.flush_delay);
  flush_timer.async_wait([self = shared_from_this()](beast::error_code ec) {
    self->flush_armed = false;
    if (!ec) self->pump();
  });
}

bool daemon_client::impl::next_frame(std::string& frame, bool& binary) {
  const bool want_detections =
      std::find(features.begin(), features.end(), protocol::features::detections) != features.end();
  std::lock_guard lock(mu);
  if (!detections.empty() && !want_detections) detections.clear();
  if (!detections.empty()) {
    frame = protocol::serialize(detections.front());
    detections.pop_front();
    ++stats.detections_sent;
    binary = false;
    return true;
  }
  const auto listed = [&](std::string_view f) {
    return std::find(features.begin(), features.end(), f) != features.end();
  };
  auto next =
      box.next(max_events, listed(protocol::features::cost), listed(protocol::features::handoff));
  if (auto* batch = std::get_if<protocol::events>(&next)) {
    frame = protocol::encode_binary(*batch);
    binary = true;
  } else if (auto* gap = std::get_if<protocol::gap>(&next)) {
    frame = protocol::serialize(*gap);
    binary = false;
  } else {
    return false;
  }
  return true;
}

void daemon_client::impl::pump() {
  if (!conn || !conn->welcomed || conn->writing || conn->closed || stopping) return;
  wake_pending = false;  // what is pushed from now on needs a wake-up of its own
  std::string frame;
  bool binary = false;
  if (next_frame(frame, binary)) write(std::move(frame), binary);
}

void daemon_client::impl::write(std::string frame, bool binary) {
  auto c = conn;
  c->writing = true;
  c->frame = std::move(frame);
  c->ws.binary(binary);
  last_write = std::chrono::steady_clock::now();
  c->ws.async_write(net::buffer(c->frame),
                    [self = shared_from_this(), c](beast::error_code ec, std::size_t) {
                      self->on_written(c, ec);
                    });
}

void daemon_client::impl::on_written(const std::shared_ptr<connection>& c, beast::error_code ec) {
  c->writing = false;
  if (c != conn || stopping) return;
  if (ec) return lost(c, "sending to the daemon: " + ec.message());
  pump();
}

void daemon_client::impl::arm_heartbeat() {
  heartbeat_timer.expires_after(options.heartbeat / 2);
  heartbeat_timer.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->stopping) return;
    self->beat();
    self->arm_heartbeat();
  });
}

void daemon_client::impl::beat() {
  const auto c = conn;
  if (!c || !c->welcomed || c->closed) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - c->last_received > kDeadPeerTimeout) {
    return lost(c,
                "no answer from the daemon for " + std::to_string(kDeadPeerTimeout.count()) + " s");
  }
  if (!c->pinging) {  // the daemon answers with a pong, which moves last_received
    c->pinging = true;
    c->ws.async_ping({}, [c](beast::error_code) { c->pinging = false; });
  }
  if (!c->writing && now - last_write >= options.heartbeat / 2) {
    // An empty batch keeps the daemon's idle timer from closing a quiet worker.
    write(protocol::encode_binary(protocol::events{}), true);
  }
}

// ---------------------------------------------------------------------------------------------
// daemon_client.

struct daemon_client::runner {
  std::unique_ptr<net::io_context> io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::thread thread;
};

daemon_client::daemon_client(client_options options) {
  auto* io = new net::io_context(1);
  runner_ = std::make_unique<runner>();
  runner_->io.reset(io);
  runner_->work.emplace(io->get_executor());
  impl_ = std::make_shared<impl>(std::move(options), *io);
  impl_->start();
  runner_->thread = std::thread([io] { io->run(); });
}

daemon_client::daemon_client(client_options options, net::io_context& io)
    : impl_(std::make_shared<impl>(std::move(options), io)) {
  impl_->start();
}

daemon_client::~daemon_client() {
  impl_->stop();
  if (runner_) {
    runner_->work.reset();
    runner_->thread.join();
    impl_.reset();  // its timers and strand before the io_context they belong to
  }
}

std::uint64_t daemon_client::send(protocol::event e) {
  return impl_->send(std::move(e));
}
void daemon_client::report(protocol::detection d) {
  impl_->report(std::move(d));
}

std::vector<protocol::verdict> daemon_client::take_verdicts() {
  if (!impl_->has_verdicts.load(std::memory_order_acquire)) return {};  // every call of an agent
  std::lock_guard lock(impl_->mu);
  impl_->has_verdicts = false;
  std::vector<protocol::verdict> out(std::make_move_iterator(impl_->inbox.begin()),
                                     std::make_move_iterator(impl_->inbox.end()));
  impl_->inbox.clear();
  return out;
}

bool daemon_client::take_swarm_complete() {
  return impl_->completed.exchange(false);
}

bool daemon_client::wait_acknowledged(std::uint64_t seq, std::chrono::milliseconds timeout) {
  return impl_->wait(timeout, [&] { return impl_->box.acknowledged() >= seq; });
}

bool daemon_client::wait_verdicts(std::uint64_t n, std::chrono::milliseconds timeout) {
  return impl_->wait(timeout, [&] { return impl_->stats.verdicts >= n; });
}

bool daemon_client::wait_connected(std::chrono::milliseconds timeout) {
  return impl_->wait(timeout, [&] { return impl_->stats.connected; });
}

client_stats daemon_client::stats() const {
  std::lock_guard lock(impl_->mu);
  client_stats s = impl_->stats;
  const auto& c = impl_->box.counters();
  s.sent = c.pushed;
  s.resent = c.resent;
  s.overflow_dropped = c.overflow_dropped;
  s.refused_dropped = c.refused_dropped;
  s.charges_dropped = c.charges_dropped;
  s.gaps_sent = c.gaps;
  s.acknowledged = impl_->box.acknowledged();
  s.outbox = impl_->box.events();
  return s;
}

const client_options& daemon_client::options() const {
  return impl_->options;
}

}  // namespace loopguard
