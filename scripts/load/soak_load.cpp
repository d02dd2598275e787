// Load for scripts/soak.sh (docs/operations.md, "Soak"): C connections of SDK workers
// (daemon_client on one shared io_context) stream paced events for S seconds while workers
// leave and come back as new incarnations all along: each incarnation lives a random time
// around --lifetime, stops sending, waits until all it sent is acknowledged, closes, and the
// same worker name connects again with a new incarnation id.
//
// Every --report seconds it prints one line: acknowledged events/s, connections open, the
// incarnations started, and the daemon's resident memory (VmRSS of /proc/PID/status) and open
// descriptors (/proc/PID/fd). At the end it requires: every event sent acknowledged, no error
// (nothing dropped or refused, no connection lost that the worker did not close itself, no
// error frame; the daemon's loopguard_errors_sent_total 0), and the end values of resident
// memory and descriptors within --tolerance of the values at the end of the warm-up.
//
// Prints the figures, then PASS or FAIL; exit status 0 only on PASS, 2 on a usage error.
#include <CLI/CLI.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "loopguard/daemon_client.hpp"
#include "sdk_load.hpp"

namespace beast = boost::beast;
namespace net = boost::asio;
using clock_type = std::chrono::steady_clock;
using seconds_d = std::chrono::duration<double>;
using namespace std::chrono_literals;

namespace {

struct options {
  unsigned short port = 0;
  std::string port_file;
  int daemon_pid = 0;
  int connections = 1000;
  int swarms = 10;
  double rate = 5;          // events/s per connection
  double seconds = 600;     // how long workers send
  double lifetime = 60;     // mean life of an incarnation, seconds (uniform in 0.5x..1.5x)
  double report = 10;       // seconds between report lines
  double warmup = 0;        // 0: the default (see warmup_seconds)
  double tolerance = 0.10;  // allowed relative change of memory and descriptors after warm-up
  double drain = 60;        // longest wait for the last acknowledgements
  int threads = 1;          // threads running the clients' io_context
  std::uint64_t fps = 40;
  std::uint64_t seed = 1;
};

// The warm-up ends at the first report line at which (1) every incarnation of the start has been
// replaced (1.5 lifetimes: from then on connections open, close and hold state as they will for
// the rest of the run), (2) the swarm window has filled twice over (20 s: soak.sh runs the
// daemon with a 10 s window, so the calls it holds stop growing) and (3) the daemon has compacted
// its log at least twice (the database, and SQLite's page cache of it, stop growing: a
// compaction empties the log and its pages are reused). --warmup S replaces (1) and (2).
double warmup_floor(const options& o) {
  return o.warmup > 0 ? o.warmup : std::max({1.5 * o.lifetime, 2 * o.report, 20.0});
}
constexpr double kWarmCompactions = 2;

// One worker slot: its current incarnation.
struct slot {
  std::string swarm, worker;
  std::unique_ptr<loopguard::daemon_client> client;
  clock_type::time_point born, ends;  // sends from born until ends, then leaves once acknowledged
  std::uint64_t sent = 0;
};

struct tally {
  std::uint64_t sent = 0, acknowledged = 0, incarnations = 0, errors = 0;
  std::string first_error;
  void error(const std::string& what) {
    if (errors++ == 0) first_error = what;
  }
};

// What an incarnation leaves behind; counts its errors.
void settle(const slot& s, tally& t) {
  const auto st = s.client->stats();
  t.sent += s.sent;
  t.acknowledged += std::min(st.acknowledged, s.sent);
  const std::string who = s.swarm + "/" + s.worker;
  if (st.acknowledged < s.sent) {
    t.error(who + ": acknowledged " + std::to_string(st.acknowledged) + " of " +
            std::to_string(s.sent) + " (" + st.last_error + ")");
  }
  if (st.overflow_dropped + st.refused_dropped > 0) t.error(who + ": dropped events");
  if (st.connects != 1 || st.disconnects != 0 || !st.last_error.empty()) {
    t.error(who + ": " + std::to_string(st.connects) + " connects, " +
            std::to_string(st.disconnects) + " lost (" + st.last_error + ")");
  }
}

class soak {
 public:
  explicit soak(const options& o) : o_(o), rng_(o.seed), work_(io_.get_executor()) {
    for (int t = 0; t < o.threads; ++t) threads_.emplace_back([this] { io_.run(); });
    slots_.resize(static_cast<std::size_t>(o.connections));
    for (int i = 0; i < o.connections; ++i) {
      auto& s = slots_[static_cast<std::size_t>(i)];
      s.swarm = "soak-" + std::to_string(i % o.swarms);
      s.worker = "w" + std::to_string(i);
    }
  }
  ~soak() {
    for (auto& s : slots_) s.client.reset();
    work_.reset();
    for (auto& t : threads_) t.join();
  }
  soak(const soak&) = delete;
  soak& operator=(const soak&) = delete;

  // Sends until o.seconds, churning; calls `sample` every o.report seconds.
  template <class Sample>
  void run(Sample&& sample) {
    start_ = clock_type::now();
    for (auto& s : slots_) start_incarnation(s, start_);
    auto next_report = start_ + to_duration(o_.report);
    const auto end = start_ + to_duration(o_.seconds);
    for (auto now = clock_type::now(); now < end; now = clock_type::now()) {
      for (auto& s : slots_) step(s, now, end);
      if (now >= next_report) {
        sample(seconds_d(now - start_).count());
        next_report += to_duration(o_.report);
      }
      std::this_thread::sleep_for(10ms);
    }
    sample(seconds_d(clock_type::now() - start_).count());  // the end value
  }

  // Waits (at most o.drain) until every open incarnation's events are acknowledged.
  double drain() {
    const auto start = clock_type::now();
    const auto deadline = start + to_duration(o_.drain);
    for (auto& s : slots_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
      if (s.sent > 0 && left.count() > 0) s.client->wait_acknowledged(s.sent, left);
    }
    return seconds_d(clock_type::now() - start).count();
  }

  // Every incarnation's figures, the open ones included (they are not closed here).
  tally totals() const {
    tally t = done_;
    for (const auto& s : slots_) settle(s, t);
    return t;
  }

  // Acknowledged so far (for the rate), and the connections open now.
  std::pair<std::uint64_t, int> progress() const {
    std::uint64_t acked = done_.acknowledged;
    int open = 0;
    for (const auto& s : slots_) {
      const auto st = s.client->stats();
      acked += std::min(st.acknowledged, s.sent);
      open += st.connected ? 1 : 0;
    }
    return {acked, open};
  }
  std::uint64_t incarnations() const { return done_.incarnations; }

 private:
  static clock_type::duration to_duration(double s) {
    return std::chrono::duration_cast<clock_type::duration>(seconds_d(s));
  }

  void start_incarnation(slot& s, clock_type::time_point now) {
    std::uniform_real_distribution<double> life(0.5 * o_.lifetime, 1.5 * o_.lifetime);
    s.client = std::make_unique<loopguard::daemon_client>(
        loopguard::load::worker_options(o_.port, s.swarm, s.worker), io_);
    s.born = now;
    s.ends = now + to_duration(life(rng_));
    s.sent = 0;
    ++done_.incarnations;
  }

  void step(slot& s, clock_type::time_point now, clock_type::time_point end) {
    const auto stop = std::min(s.ends, end);
    const auto until = std::min(now, stop);
    const auto due = static_cast<std::uint64_t>(seconds_d(until - s.born).count() * o_.rate);
    while (s.sent < due) {
      auto e = loopguard::load::nth_event(++s.sent, o_.fps);
      e.t = seconds_d(now - start_).count();  // real time: calls leave the swarm's window
      s.client->send(std::move(e));
    }
    if (now < s.ends || now >= end) return;
    // Leaving: once everything is acknowledged (or after the drain time), a new incarnation.
    const auto st = s.client->stats();
    if (st.acknowledged < s.sent && now - s.ends < to_duration(o_.drain)) return;
    settle(s, done_);
    s.client.reset();
    start_incarnation(s, now);
  }

  const options& o_;
  std::mt19937_64 rng_;
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::vector<slot> slots_;
  clock_type::time_point start_;
  tally done_;  // of the incarnations that left
};

struct sample_point {
  double t = 0, events_per_s = 0, rss_mib = 0, compactions = 0;
  std::uint64_t incarnations = 0;
  long fds = 0;
  int open = 0;
  double held = 0, expired = 0;  // incarnations the daemon holds, expired ones it remembers
};

// VmRSS of /proc/PID/status in MiB, -1 when unreadable.
double resident_mib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

long open_fds(int pid) {
  std::error_code ec;
  long n = 0;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end;
       !ec && it != end; it.increment(ec)) {
    ++n;
  }
  return ec ? -1 : n;
}

// The value of a counter in the daemon's /metrics, -1 when it cannot be read.
double daemon_metric(unsigned short port, const std::string& name) {
  try {
    net::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(10s);
    stream.connect({net::ip::make_address("127.0.0.1"), port});
    beast::http::request<beast::http::empty_body> req{beast::http::verb::get, "/metrics", 11};
    req.set(beast::http::field::host, "127.0.0.1");
    beast::http::write(stream, req);
    beast::flat_buffer buffer;
    beast::http::response<beast::http::string_body> res;
    beast::http::read(stream, buffer, res);
    const std::string& body = res.body();
    const std::string key = "\n" + name + " ";
    const auto at = body.find(key);
    return at == std::string::npos ? -1 : std::stod(body.substr(at + key.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

bool within(double end, double warm, double tolerance) {
  return warm > 0 && end >= warm * (1 - tolerance) && end <= warm * (1 + tolerance);
}

// Prints the end values of memory and descriptors against those after the warm-up (the first
// report line at or after `warmup` seconds with the compactions it needs); whether both are
// within `tolerance`.
bool flat_after_warmup(const std::vector<sample_point>& points, double warmup, double tolerance) {
  const auto warm = std::find_if(points.begin(), points.end(), [&](const sample_point& p) {
    return p.t >= warmup - 0.5 && p.compactions >= kWarmCompactions;
  });
  if (warm == points.end() || warm == points.end() - 1) {
    std::printf(
        "the warm-up did not end before the last report line: nothing to compare (run "
        "longer, or with a smaller --compact-log-mb)\n");
    return false;
  }
  const auto& end = points.back();
  const bool rss_ok = within(end.rss_mib, warm->rss_mib, tolerance);
  const bool fds_ok =
      within(static_cast<double>(end.fds), static_cast<double>(warm->fds), tolerance);
  const double grown_kib = (end.rss_mib - warm->rss_mib) * 1024;
  const auto new_incarnations = end.incarnations - warm->incarnations;
  std::printf(
      "RSS                  %.1f MiB after warm-up (t=%.0f s), %.1f MiB at the end: "
      "%+.1f%% (limit %.0f%%)%s\n",
      warm->rss_mib, warm->t, end.rss_mib, 100 * (end.rss_mib - warm->rss_mib) / warm->rss_mib,
      100 * tolerance, rss_ok ? "" : "  OUT OF BOUNDS");
  std::printf("                     %+.0f bytes per incarnation started since (%llu)\n",
              new_incarnations > 0 ? grown_kib * 1024 / static_cast<double>(new_incarnations) : 0.0,
              static_cast<unsigned long long>(new_incarnations));
  std::printf("descriptors          %ld after warm-up, %ld at the end%s\n", warm->fds, end.fds,
              fds_ok ? "" : "  OUT OF BOUNDS");
  return rss_ok && fds_ok;
}

int run(options o) {
  o.port = loopguard::load::daemon_port(o.port, o.port_file);
  if (o.port == 0) {
    std::fprintf(stderr, "soak_load: no port in --port-file %s\n", o.port_file.c_str());
    return 2;
  }
  const double warmup = warmup_floor(o);
  std::printf(
      "soak: %d connections over %d swarms, %.0f s at %g events/s each, incarnations "
      "living %g..%g s; warm-up: at least %.0f s and %.0f compactions\n",
      o.connections, o.swarms, o.seconds, o.rate, 0.5 * o.lifetime, 1.5 * o.lifetime, warmup,
      kWarmCompactions);
  std::printf("%8s %10s %6s %12s %7s %8s %10s %6s %11s\n", "t (s)", "events/s", "open",
              "incarnations", "held", "expired", "RSS (MiB)", "fds", "compactions");
  std::vector<sample_point> points;
  soak load(o);
  std::uint64_t last_acked = 0;
  double last_t = 0;
  load.run([&](double t) {
    const auto [acked, open] = load.progress();
    sample_point p{t,
                   static_cast<double>(acked - last_acked) / (t - last_t),
                   resident_mib(o.daemon_pid),
                   daemon_metric(o.port, "loopguard_compactions_total"),
                   load.incarnations(),
                   open_fds(o.daemon_pid),
                   open};
    p.held = daemon_metric(o.port, "loopguard_incarnations");
    p.expired = daemon_metric(o.port, "loopguard_expired_incarnations");
    last_acked = acked;
    last_t = t;
    std::printf("%8.0f %10.0f %6d %12llu %7.0f %8.0f %10.1f %6ld %11.0f\n", p.t, p.events_per_s,
                p.open, static_cast<unsigned long long>(p.incarnations), p.held, p.expired,
                p.rss_mib, p.fds, p.compactions);
    std::fflush(stdout);
    points.push_back(p);
  });
  const double drained = load.drain();
  const auto t = load.totals();
  const double daemon_errors = daemon_metric(o.port, "loopguard_errors_sent_total");
  bool ok = t.sent == t.acknowledged && t.errors == 0 && daemon_errors == 0;
  std::printf("events sent          %llu\n", static_cast<unsigned long long>(t.sent));
  std::printf("events acknowledged  %llu\n", static_cast<unsigned long long>(t.acknowledged));
  std::printf("incarnations         %llu\n", static_cast<unsigned long long>(t.incarnations));
  std::printf("drain                %.2f s\n", drained);
  std::printf("errors               %llu (workers), %.0f (daemon: loopguard_errors_sent_total)\n",
              static_cast<unsigned long long>(t.errors), daemon_errors);
  if (t.errors > 0) std::printf("first error          %s\n", t.first_error.c_str());
  ok = flat_after_warmup(points, warmup, o.tolerance) && ok;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"loopguard_soak_load: churning SDK workers for scripts/soak.sh"};
  auto* port = app.add_option("--port", o.port, "the daemon's loopback port");
  app.add_option("--port-file", o.port_file, "read the port from this file (once, at start)")
      ->excludes(port);
  app.add_option("--daemon-pid", o.daemon_pid, "the daemon's PID (memory, descriptors)")
      ->required();
  app.add_option("--connections", o.connections, "concurrent workers")
      ->check(CLI::Range(1, 100000));
  app.add_option("--swarms", o.swarms, "swarms the workers are spread over")
      ->check(CLI::Range(1, 10000));
  app.add_option("--rate", o.rate, "events/s per connection")->check(CLI::Range(0.1, 100000.0));
  app.add_option("--seconds", o.seconds, "how long to send")->check(CLI::Range(1.0, 604800.0));
  app.add_option("--lifetime", o.lifetime, "mean life of an incarnation, seconds")
      ->check(CLI::Range(0.1, 604800.0));
  app.add_option("--report", o.report, "seconds between report lines")
      ->check(CLI::Range(0.5, 3600.0));
  app.add_option("--warmup", o.warmup, "warm-up seconds (default: see soak_load.cpp)")
      ->check(CLI::Range(0.0, 604800.0));
  app.add_option("--tolerance", o.tolerance, "allowed relative change after warm-up")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--drain-seconds", o.drain, "longest wait for acknowledgements")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--threads", o.threads, "client I/O threads")->check(CLI::Range(1, 64));
  app.add_option("--seed", o.seed, "seed of the incarnations' lifetimes");
  CLI11_PARSE(app, argc, argv);
  if (o.port == 0 && o.port_file.empty()) {
    std::fprintf(stderr, "soak_load: give --port or --port-file\n");
    return 2;
  }
  if (o.swarms > o.connections) o.swarms = o.connections;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak_load: %s\n", e.what());
    return 2;
  }
}
