// Load generator for scripts/bench/daemon: N WebSocket workers sending binary event batches to
// a running loopguardd, each keeping a bounded number of batches unacknowledged. Reports
// events/s, ack latency (send of a batch -> the ack covering it, i.e. durable) and, in the
// verdict phase, the time from the threshold-crossing call to the verdict at every worker.
// With --poll-ms, a second thread meanwhile GETs --poll-target every that many ms (a page
// polling the swarm view) and reports how long each answer took.
// With --redis, the same connections, pacing and batches go to a redis-server instead, each
// event as HINCRBY fp:<key> calls 1 and SADD workers:<key> w<connection> (the per-event work
// of the Redis peer in scripts/bench/daemon); a batch is acknowledged by its last reply, which
// redis-server sends after its fsync under `appendfsync always`.
// One line of JSON on stdout. Not a test.
#include <CLI/CLI.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "loopguard/protocol.hpp"

namespace beast = boost::beast;
namespace net = boost::asio;
using clock_type = std::chrono::steady_clock;
using loopguard::protocol::event;

namespace {

struct options {
  unsigned short port = 0;
  int connections = 16;
  std::uint64_t events = 1000000;
  std::size_t batch = 64;
  std::uint64_t keys = 100000;  // 0: every event a new fingerprint (fill mode)
  std::size_t in_flight = 32;   // unacknowledged batches per connection
  int verdict_probes = 20;
  std::string swarm = "bench";
  int swarms = 1;  // connection i joins `swarm` (1) or `swarm-<i % swarms>`
  std::string swarm_of(int index) const {
    return swarms <= 1 ? swarm : swarm + "-" + std::to_string(index % swarms);
  }
  std::uint64_t seed = 42;
  double t0 = 0;    // event times start here (seconds)
  int poll_ms = 0;  // 0: no polling
  double rate = 0;  // events/s over all connections, paced; 0: as fast as in_flight allows
  std::string poll_target = "/api/swarms/bench";
  bool redis = false;  // speak RESP to a redis-server on `port` (no verdict phase)
};

// One connection's sending side, whatever it speaks: `quota` events in batches, at most
// `in_flight` batches unanswered, and with --rate each batch sent when it is due (the
// connections spread over the first gap). A batch's latency counts from when it was due, so a
// batch held back by the in-flight limit is not measured as faster than it was (no coordinated
// omission).
class paced_sender : public std::enable_shared_from_this<paced_sender> {
 public:
  paced_sender(net::io_context& ioc, const options& o, int index)
      : o_(o), index_(index), rng_(o.seed + static_cast<std::uint64_t>(index)), timer_(ioc) {}
  virtual ~paced_sender() = default;
  paced_sender(const paced_sender&) = delete;
  paced_sender& operator=(const paced_sender&) = delete;

  // Throughput phase: send `quota` events (keys from `key_offset` when every key is new), then
  // wait for their answers.
  void start(std::uint64_t quota, std::uint64_t key_offset) {
    quota_ = quota;
    key_offset_ = key_offset;
    next_due_ = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                        gap() * index_ / std::max(1, o_.connections));
    read_answers();
    pump();
  }
  bool done() const { return broken() || (unanswered() == 0 && sent_ == quota_); }
  std::vector<double>& latencies() { return latencies_; }

 protected:
  virtual void read_answers() = 0;                          // starts the read loop
  virtual void send_batch(clock_type::time_point due) = 0;  // adds its events to sent_
  virtual std::size_t unanswered() const = 0;               // batches sent, not answered
  virtual bool broken() const { return false; }             // no answer can come any more
  template <class T>
  std::shared_ptr<T> self() {
    return std::static_pointer_cast<T>(shared_from_this());
  }
  // The next event's key: drawn from --keys, or the next new one.
  std::uint64_t key(std::uint64_t i) {
    return o_.keys ? rng_() % o_.keys : key_offset_ + sent_ + i;
  }

  // Sends every batch that is due and allowed; with --rate, wakes when the next one is due.
  void pump() {
    const bool paced = o_.rate > 0;
    while (sent_ < quota_ && unanswered() < o_.in_flight &&
           (!paced || clock_type::now() >= next_due_)) {
      send_batch(paced ? next_due_ : clock_type::now());
      if (paced) next_due_ += std::chrono::duration_cast<clock_type::duration>(gap());
    }
    // Held back by the in-flight limit, the next answer pumps again: a timer for a batch
    // already due would fire at once, again and again, until then.
    if (paced && sent_ < quota_ && unanswered() < o_.in_flight && !timer_armed_) {
      timer_armed_ = true;
      timer_.expires_at(next_due_);
      timer_.async_wait([self = shared_from_this()](beast::error_code) {
        self->timer_armed_ = false;
        self->pump();
      });
    }
  }

  const options& o_;
  int index_;
  std::mt19937_64 rng_;
  std::uint64_t sent_ = 0, quota_ = 0;
  std::vector<double> latencies_;

 private:
  // The time between two batches of one paced connection.
  std::chrono::duration<double> gap() const {
    if (o_.rate <= 0) return std::chrono::duration<double>(0);
    return std::chrono::duration<double>(static_cast<double>(o_.batch) * o_.connections / o_.rate);
  }

  std::uint64_t key_offset_ = 0;
  net::steady_timer timer_;
  bool timer_armed_ = false;
  clock_type::time_point next_due_;
};

// A worker of loopguardd: binary event batches over a WebSocket, answered by acks.
class worker : public paced_sender {
 public:
  worker(net::io_context& ioc, const options& o, int index)
      : paced_sender(ioc, o, index), ws_(ioc) {}

  void connect() {
    beast::get_lowest_layer(ws_).connect({net::ip::make_address("127.0.0.1"), o_.port});
    beast::get_lowest_layer(ws_).socket().set_option(net::ip::tcp::no_delay(true));
    ws_.handshake("127.0.0.1", "/ws?swarm=" + o_.swarm_of(index_));
    ws_.write(net::buffer(nlohmann::json{{"type", "hello"},
                                         {"version", 1},
                                         {"swarm", o_.swarm_of(index_)},
                                         {"worker", "w" + std::to_string(index_)},
                                         {"incarnation", "bench-" + std::to_string(::getpid())}}
                              .dump()));
    ws_.read(buffer_);  // welcome
    buffer_.consume(buffer_.size());
    ws_.binary(true);
  }

  std::uint64_t next_seq() const { return seq_ + 1; }

  // Verdict phase: one event of fingerprint `fp`, written synchronously before the async loop.
  void send_probe(std::uint64_t fp, double t) {
    loopguard::protocol::events b;
    b.items.push_back(make_event(fp, 77, t));
    pending_.emplace_back(seq_, clock_type::now());
    sent_ += 1;
    quota_ += 1;
    enqueue(loopguard::protocol::encode_binary(b));
  }
  std::vector<std::pair<std::uint64_t, clock_type::time_point>> verdicts;  // fp, arrival

 private:
  event make_event(std::uint64_t fp, std::uint64_t result, double t) {
    event e;
    e.seq = ++seq_;
    e.tool = "search";
    e.summary = "query=bench";
    e.exact = fp;
    e.structural = fp ^ 0x5bd1e995ULL;
    e.result = result;
    e.t = t;
    return e;
  }

  std::size_t unanswered() const override { return pending_.size(); }
  void read_answers() override { do_read(); }

  void send_batch(clock_type::time_point due) override {
    loopguard::protocol::events b;
    const std::uint64_t n = std::min<std::uint64_t>(o_.batch, quota_ - sent_);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t k = key(i);
      // Results change on every call: the load measures counting, not verdict fan-out.
      b.items.push_back(
          make_event(0x1000000ULL + k, rng_(), o_.t0 + static_cast<double>(sent_ + i) * 1e-3));
    }
    sent_ += n;
    pending_.emplace_back(seq_, due);
    enqueue(loopguard::protocol::encode_binary(b));
  }

  void enqueue(std::string frame) {
    out_.push_back(std::move(frame));
    if (!writing_) do_write();
  }
  void do_write() {
    if (out_.empty()) return;
    writing_ = true;
    ws_.async_write(net::buffer(out_.front()),
                    [self = self<worker>()](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      self->out_.pop_front();
                      if (!ec) self->do_write();
                    });
  }
  void do_read() {
    ws_.async_read(buffer_, [self = self<worker>()](beast::error_code ec, std::size_t) {
      if (ec) return;
      self->on_message(beast::buffers_to_string(self->buffer_.data()));
      self->buffer_.consume(self->buffer_.size());
      self->do_read();
    });
  }
  void on_message(const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    const auto type = j.value("type", "");
    if (type == "ack") {
      const auto seq = j["seq"].get<std::uint64_t>();
      const auto now = clock_type::now();
      while (!pending_.empty() && pending_.front().first <= seq) {
        latencies_.push_back(std::chrono::duration<double>(now - pending_.front().second).count());
        pending_.pop_front();
      }
      pump();
    } else if (type == "error") {
      std::fprintf(stderr, "worker %d: %s\n", index_, text.c_str());
    } else if (type == "verdict") {
      verdicts.emplace_back(std::stoull(j["fingerprint"].get<std::string>(), nullptr, 16),
                            clock_type::now());
    }
  }

  beast::websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buffer_;
  std::deque<std::string> out_;
  bool writing_ = false;
  std::uint64_t seq_ = 0;
  std::deque<std::pair<std::uint64_t, clock_type::time_point>> pending_;  // last seq, due time
};

// A connection to redis-server sending the same batches as `worker`: each event is one
// HINCRBY and one SADD, written pipelined; a batch is done when its last reply arrives.
class redis_worker : public paced_sender {
 public:
  redis_worker(net::io_context& ioc, const options& o, int index)
      : paced_sender(ioc, o, index), socket_(ioc) {}

  void connect() {
    socket_.connect({net::ip::make_address("127.0.0.1"), o_.port});
    socket_.set_option(net::ip::tcp::no_delay(true));
  }
  bool failed() const { return failed_; }
  std::uint64_t errors() const { return errors_; }

 private:
  static void command(std::string& out, std::initializer_list<std::string_view> args) {
    out += '*' + std::to_string(args.size()) + "\r\n";
    for (const auto a : args) {
      out += '$' + std::to_string(a.size()) + "\r\n";
      out += a;
      out += "\r\n";
    }
  }

  std::size_t unanswered() const override { return pending_.size(); }
  bool broken() const override { return failed_; }
  void read_answers() override { do_read(); }

  void send_batch(clock_type::time_point due) override {
    std::string out;
    const std::uint64_t n = std::min<std::uint64_t>(o_.batch, quota_ - sent_);
    const std::string worker = "w" + std::to_string(index_);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::string key = std::to_string(this->key(i));
      command(out, {"HINCRBY", "fp:" + key, "calls", "1"});
      command(out, {"SADD", "workers:" + key, worker});
    }
    sent_ += n;
    pending_.push_back({2 * n, due});
    out_.push_back(std::move(out));
    if (!writing_) do_write();
  }
  void do_write() {
    if (out_.empty()) return;
    writing_ = true;
    net::async_write(socket_, net::buffer(out_.front()),
                     [self = self<redis_worker>()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->out_.pop_front();
                       if (ec) return self->fail("write", ec);
                       self->do_write();
                     });
  }
  void do_read() {
    socket_.async_read_some(net::buffer(in_),
                            [self = self<redis_worker>()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->fail("read", ec);
                              self->on_bytes(std::string_view(self->in_.data(), n));
                              self->do_read();
                            });
  }
  // Every reply to HINCRBY and SADD is one line, ":N" or an error ("-ERR ..."), so a reply ends
  // at each "\n"; a line may arrive split over two reads. Only an error's text is kept.
  void on_bytes(std::string_view bytes) {
    const auto now = clock_type::now();
    for (const char c : bytes) {
      if (line_start_) error_line_ = c != ':';
      line_start_ = c == '\n';
      if (error_line_ && errors_ < 3) error_text_ += c;
      if (!line_start_) continue;
      if (error_line_ && ++errors_ <= 3) {
        std::fprintf(stderr, "redis %d: %s", index_, error_text_.c_str());
        error_text_.clear();
      }
      if (pending_.empty()) continue;
      if (--pending_.front().replies == 0) {
        latencies_.push_back(std::chrono::duration<double>(now - pending_.front().due).count());
        pending_.pop_front();
      }
    }
    pump();
  }
  void fail(const char* what, beast::error_code ec) {
    if (failed_) return;
    failed_ = true;
    std::fprintf(stderr, "redis %d: %s: %s\n", index_, what, ec.message().c_str());
  }

  struct batch {
    std::uint64_t replies;  // still to come
    clock_type::time_point due;
  };
  net::ip::tcp::socket socket_;
  std::array<char, 65536> in_{};
  bool line_start_ = true, error_line_ = false;
  std::string error_text_;  // of the error line being read (the first three are printed)
  std::deque<std::string> out_;
  bool writing_ = false, failed_ = false;
  std::uint64_t errors_ = 0;
  std::deque<batch> pending_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// A page polling one HTTP view every o.poll_ms until `stop`: one connection per request.
struct poll_result {
  std::vector<double> seconds;  // per answered request
  std::size_t failures = 0, bytes = 0;
};

void poll_one(const options& o, net::io_context& ioc, poll_result& out) {
  namespace http = beast::http;
  const auto t0 = clock_type::now();
  beast::tcp_stream s(ioc);
  s.connect({net::ip::make_address("127.0.0.1"), o.port});
  http::request<http::empty_body> req{http::verb::get, o.poll_target, 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(s, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(s, buffer, res);
  if (res.result_int() != 200) ++out.failures;
  out.bytes = res.body().size();
  out.seconds.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  beast::error_code ec;
  s.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
}

void poll_loop(const options& o, const std::atomic<bool>& stop, poll_result& out) {
  net::io_context ioc;
  auto next = clock_type::now();
  while (!stop) {
    next += std::chrono::milliseconds(o.poll_ms);
    try {
      poll_one(o, ioc, out);
    } catch (const std::exception&) {
      ++out.failures;
    }
    std::this_thread::sleep_until(next);
  }
}

// Verdict phase: for each probe a fresh fingerprint is called once by each of 10 workers
// (the default threshold, from >= 2 workers); the 10th call crosses it. The time from that
// call to the verdict at every worker, per probe.
// The probes' times follow the throughput phase's (`after`): the swarm clock moves at most one
// window per event (docs/protocol.md, "Time"), so probes far in the future would each push the
// others out of the window and never reach the threshold.
std::vector<double> verdict_phase(net::io_context& ioc, std::vector<std::shared_ptr<worker>>& ws,
                                  const options& o, double after) {
  std::vector<double> verdict_latency;
  if (o.connections >= 2) {
    for (int p = 0; p < o.verdict_probes; ++p) {
      const std::uint64_t fp = std::uint64_t{0xF00D0000} + static_cast<std::uint64_t>(p);
      const double t = after + 1 + p;
      for (int c = 0; c < 10; ++c) {
        auto& w = ws[static_cast<std::size_t>(c % o.connections)];
        if (c == 9) break;
        w->send_probe(fp, t);
      }
      while (!std::all_of(ws.begin(), ws.end(), [](auto& w) { return w->done(); })) ioc.run_one();
      const auto crossing = clock_type::now();
      ws[9 % ws.size()]->send_probe(fp, t);
      const auto arrived = [&](worker& w) {
        return std::any_of(w.verdicts.begin(), w.verdicts.end(),
                           [&](auto& v) { return v.first == fp; });
      };
      while (!std::all_of(ws.begin(), ws.end(), [&](auto& w) { return arrived(*w); }))
        ioc.run_one();
      double last = 0;
      for (auto& w : ws) {
        for (auto& v : w->verdicts) {
          if (v.first == fp)
            last = std::max(last, std::chrono::duration<double>(v.second - crossing).count());
        }
      }
      verdict_latency.push_back(last);
    }
  }
  return verdict_latency;
}

// The options from the command line; an exit status when they are wrong (or --help).
std::optional<int> parse(int argc, char** argv, options& o) {
  CLI::App app{"loopguardd load generator"};
  app.add_option("--port", o.port)->required();
  app.add_option("--connections", o.connections);
  app.add_option("--events", o.events, "total events, all connections");
  app.add_option("--batch", o.batch);
  app.add_option("--keys", o.keys, "distinct fingerprints drawn at random; 0: all distinct");
  app.add_option("--in-flight", o.in_flight, "unacknowledged batches per connection");
  app.add_option("--verdict-probes", o.verdict_probes);
  app.add_option("--swarm", o.swarm);
  app.add_option("--swarms", o.swarms,
                 "connection i joins swarm SWARM-<i mod N> (N > 1; no verdict probes)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "keys and results; runs into one swarm need their own");
  app.add_option("--t0", o.t0,
                 "first event time in s: runs a window apart do not count each other's calls");
  app.add_option("--poll-ms", o.poll_ms, "GET --poll-target every this many ms; 0: never");
  app.add_option("--poll-target", o.poll_target);
  app.add_option("--rate", o.rate,
                 "events/s over all connections, each sending a batch when it is due (latency "
                 "counted from then); 0: as fast as --in-flight allows");
  app.add_flag("--redis", o.redis,
               "send to a redis-server on --port: each event HINCRBY + SADD, a batch acknowledged "
               "by its last reply (no verdict phase)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (o.swarms > 1 && o.verdict_probes > 0) {
    std::fprintf(stderr, "--swarms %d: the verdict probes need one swarm (--verdict-probes 0)\n",
                 o.swarms);
    return 2;
  }
  if (o.redis && o.poll_ms > 0) {
    std::fprintf(stderr, "--redis: no --poll-ms (it polls loopguardd's HTTP API)\n");
    return 2;
  }
  if (o.swarms > o.connections) {
    std::fprintf(stderr, "--swarms %d: at most --connections (%d)\n", o.swarms, o.connections);
    return 2;
  }
  return std::nullopt;
}

// The throughput phase over `ws` (connected): o.events split over them. Its counts and latency
// percentiles as JSON.
template <class W>
nlohmann::json throughput(net::io_context& ioc, std::vector<std::shared_ptr<W>>& ws,
                          const options& o) {
  const std::uint64_t per = o.events / static_cast<std::uint64_t>(o.connections);
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < ws.size(); ++i) ws[i]->start(per, per * i);
  while (!std::all_of(ws.begin(), ws.end(), [](auto& w) { return w->done(); })) ioc.run_one();
  const double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::vector<double> lat;
  for (auto& w : ws) lat.insert(lat.end(), w->latencies().begin(), w->latencies().end());
  return {{"events", per * ws.size()},
          {"seconds", seconds},
          {"events_per_second", static_cast<double>(per * ws.size()) / seconds},
          {"ack_p50_ms", percentile(lat, 0.5) * 1e3},
          {"ack_p99_ms", percentile(lat, 0.99) * 1e3},
          {"ack_max_ms", percentile(lat, 1.0) * 1e3}};
}

template <class W>
std::vector<std::shared_ptr<W>> connect_all(net::io_context& ioc, const options& o) {
  std::vector<std::shared_ptr<W>> ws;
  for (int i = 0; i < o.connections; ++i) {
    ws.push_back(std::make_shared<W>(ioc, o, i));
    ws.back()->connect();
  }
  return ws;
}

// The --redis run: the same pacing and batches against redis-server.
int run_redis(const options& o) {
  net::io_context ioc(1);
  auto ws = connect_all<redis_worker>(ioc, o);
  nlohmann::json out = throughput(ioc, ws, o);
  std::uint64_t errors = 0;
  bool failed = false;
  for (auto& w : ws) {
    errors += w->errors();
    failed = failed || w->failed();
  }
  if (failed) {  // its numbers would count events never answered
    std::fprintf(stderr, "loopguard_daemon_load: a connection to redis-server failed; no result\n");
    return 1;
  }
  out["errors"] = errors;
  std::printf("%s\n", out.dump().c_str());
  return errors > 0 ? 1 : 0;
}

// The loopguardd run: throughput and ack latency, then the verdict phase.
int run_daemon(const options& o) {
  net::io_context ioc(1);
  auto ws = connect_all<worker>(ioc, o);
  std::atomic<bool> stop_polling{false};
  poll_result polls;
  std::thread poller;
  if (o.poll_ms > 0)
    poller = std::thread(poll_loop, std::cref(o), std::cref(stop_polling), std::ref(polls));
  nlohmann::json out = throughput(ioc, ws, o);
  stop_polling = true;
  if (poller.joinable()) poller.join();

  const std::uint64_t per = o.events / static_cast<std::uint64_t>(o.connections);
  const auto verdict_latency = verdict_phase(ioc, ws, o, o.t0 + static_cast<double>(per) * 1e-3);
  out.update(nlohmann::json{{"verdict_all_workers_p50_ms", percentile(verdict_latency, 0.5) * 1e3},
                            {"verdict_all_workers_max_ms", percentile(verdict_latency, 1.0) * 1e3},
                            {"polls", polls.seconds.size()},
                            {"poll_failures", polls.failures},
                            {"poll_bytes", polls.bytes},
                            {"poll_p50_ms", percentile(polls.seconds, 0.5) * 1e3},
                            {"poll_max_ms", percentile(polls.seconds, 1.0) * 1e3}});
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const auto status = parse(argc, argv, o)) return *status;
  try {
    return o.redis ? run_redis(o) : run_daemon(o);
  } catch (const std::exception& e) {  // e.g. nothing listens on --port
    std::fprintf(stderr, "loopguard_daemon_load: %s\n", e.what());
    return 1;
  }
}
