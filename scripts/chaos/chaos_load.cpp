// Load for scripts/chaos.sh: W SDK workers (daemon_client, reconnecting with backoff and
// resending what was not acknowledged) stream a deterministic sequence of events at a paced
// rate into a few swarms while the script kills and restarts loopguardd on the same port. At
// the end it waits (bounded) until every event sent is acknowledged, fetches each swarm's
// digest over HTTP and compares it with the digest of the same events applied in-process
// (shared_economics_state with the default rules: the daemon must run without a config).
//
// The final state does not depend on how the workers' events interleave or on how often one
// is resent: event n of every worker calls fingerprint 1 + n % fps with a result fixed per
// fingerprint (the progress rule counts the same calls whatever the order) at a time fixed per
// fingerprint (first and last seen do not move; every call stays in the window). A lost event
// or one counted twice changes the calls of its fingerprint, so the digest differs.
//
// Prints the figures, one per line, then PASS or FAIL; exit status 0 only on PASS.
#include <CLI/CLI.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../load/sdk_load.hpp"
#include "loopguard/daemon_client.hpp"
#include "loopguard/hex.hpp"
#include "loopguard/protocol.hpp"
#include "state/shared_economics_state.hpp"

namespace beast = boost::beast;
namespace net = boost::asio;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

struct options {
  unsigned short port = 0;
  std::string port_file;  // read once at start when --port is not given
  int workers = 8;
  int swarms = 2;
  double rate = 100;       // events/s per worker
  double seconds = 20;     // how long events are sent
  double drain = 60;       // longest wait for the last acknowledgements, seconds
  std::uint64_t fps = 40;  // fingerprints each worker cycles through
};

std::string swarm_name(int swarm) {
  return "chaos-" + std::to_string(swarm);
}
std::string worker_name(int worker) {
  return "w" + std::to_string(worker);
}

// The digest of `swarm` after its workers sent sent[w] events each (w: every worker of it).
std::string expected_digest(const options& o, int swarm, const std::vector<std::uint64_t>& sent) {
  loopguard::daemon::shared_economics_state s;
  loopguard::daemon::swarm_event e;
  e.swarm = swarm_name(swarm);
  for (int w = swarm; w < o.workers; w += o.swarms) {
    e.worker = worker_name(w);
    for (std::uint64_t n = 1; n <= sent[static_cast<std::size_t>(w)]; ++n) {
      loopguard::daemon::assign(e, loopguard::load::nth_event(n, o.fps));
      s.apply(e);
    }
  }
  return loopguard::to_hex(s.digest(swarm_name(swarm)));
}

// GET /api/swarms/{swarm}/digest; empty with `error` set when it failed.
std::string fetch_digest(unsigned short port, const std::string& swarm, std::string& error) {
  try {
    net::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(10s);
    stream.connect({net::ip::make_address("127.0.0.1"), port});
    beast::http::request<beast::http::empty_body> req{beast::http::verb::get,
                                                      "/api/swarms/" + swarm + "/digest", 11};
    req.set(beast::http::field::host, "127.0.0.1");
    beast::http::write(stream, req);
    beast::flat_buffer buffer;
    beast::http::response<beast::http::string_body> res;
    beast::http::read(stream, buffer, res);
    if (res.result_int() != 200) {
      error = "HTTP " + std::to_string(res.result_int()) + ": " + res.body();
      return {};
    }
    return nlohmann::json::parse(res.body()).value("digest", "");
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
}

std::string fetch_digest_retrying(unsigned short port, const std::string& swarm) {
  std::string error;
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto d = fetch_digest(port, swarm, error);
    if (!d.empty()) return d;
    std::this_thread::sleep_for(250ms);
  }
  std::fprintf(stderr, "chaos_load: GET /api/swarms/%s/digest: %s\n", swarm.c_str(), error.c_str());
  return {};
}

std::vector<std::unique_ptr<loopguard::daemon_client>> connect_workers(const options& o) {
  std::vector<std::unique_ptr<loopguard::daemon_client>> clients;
  for (int w = 0; w < o.workers; ++w) {
    const auto c =
        loopguard::load::worker_options(o.port, swarm_name(w % o.swarms), worker_name(w));
    clients.push_back(std::make_unique<loopguard::daemon_client>(c));
  }
  return clients;
}

// Sends each worker's events paced at o.rate for o.seconds; returns what each one sent.
std::vector<std::uint64_t> send_paced(const options& o,
                                      std::vector<std::unique_ptr<loopguard::daemon_client>>& cs) {
  const auto quota = static_cast<std::uint64_t>(o.rate * o.seconds);
  std::vector<std::uint64_t> sent(cs.size(), 0);
  const auto start = clock_type::now();
  for (;;) {
    const std::chrono::duration<double> elapsed = clock_type::now() - start;
    const auto due = std::min(quota, static_cast<std::uint64_t>(elapsed.count() * o.rate));
    for (std::size_t w = 0; w < cs.size(); ++w) {
      while (sent[w] < due) cs[w]->send(loopguard::load::nth_event(++sent[w], o.fps));
    }
    if (due == quota) return sent;
    std::this_thread::sleep_for(5ms);
  }
}

// Waits until every worker's last event is acknowledged, at most o.drain seconds in all.
double drain(const options& o, std::vector<std::unique_ptr<loopguard::daemon_client>>& cs,
             const std::vector<std::uint64_t>& sent) {
  const auto start = clock_type::now();
  const auto deadline = start + std::chrono::duration_cast<clock_type::duration>(
                                    std::chrono::duration<double>(o.drain));
  for (std::size_t w = 0; w < cs.size(); ++w) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() > 0) cs[w]->wait_acknowledged(sent[w], left);
  }
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

struct totals {
  std::uint64_t sent = 0, acknowledged = 0, resent = 0, reconnects = 0, dropped = 0;
  int unacked_workers = 0;
};

totals sum_stats(const std::vector<std::unique_ptr<loopguard::daemon_client>>& cs,
                 const std::vector<std::uint64_t>& sent) {
  totals t;
  for (std::size_t w = 0; w < cs.size(); ++w) {
    const auto s = cs[w]->stats();
    t.sent += sent[w];
    t.acknowledged += std::min(s.acknowledged, sent[w]);
    t.resent += s.resent;
    t.reconnects += s.connects > 0 ? s.connects - 1 : 0;
    t.dropped += s.overflow_dropped + s.refused_dropped;
    if (s.acknowledged < sent[w]) {
      ++t.unacked_workers;
      std::fprintf(stderr, "chaos_load: %s acknowledged %llu of %llu (last error: %s)\n",
                   worker_name(static_cast<int>(w)).c_str(),
                   static_cast<unsigned long long>(s.acknowledged),
                   static_cast<unsigned long long>(sent[w]), s.last_error.c_str());
    }
  }
  return t;
}

int run(options o) {
  o.port = loopguard::load::daemon_port(o.port, o.port_file);
  if (o.port == 0) {
    std::fprintf(stderr, "chaos_load: no port in --port-file %s\n", o.port_file.c_str());
    return 2;
  }
  auto clients = connect_workers(o);
  const auto sent = send_paced(o, clients);
  const double drained = drain(o, clients, sent);
  const auto t = sum_stats(clients, sent);
  bool ok = t.unacked_workers == 0 && t.dropped == 0;
  std::printf("workers              %d (%d swarms)\n", o.workers, o.swarms);
  std::printf("events sent          %llu\n", static_cast<unsigned long long>(t.sent));
  std::printf("events acknowledged  %llu\n", static_cast<unsigned long long>(t.acknowledged));
  std::printf("events resent        %llu\n", static_cast<unsigned long long>(t.resent));
  std::printf("events dropped       %llu\n", static_cast<unsigned long long>(t.dropped));
  std::printf("reconnects           %llu\n", static_cast<unsigned long long>(t.reconnects));
  std::printf("drain                %.2f s\n", drained);
  for (int s = 0; s < o.swarms; ++s) {
    const auto want = expected_digest(o, s, sent);
    const auto got = fetch_digest_retrying(o.port, swarm_name(s));
    std::printf("digest %-13s expected %s, daemon %s%s\n", swarm_name(s).c_str(), want.c_str(),
                got.empty() ? "(none)" : got.c_str(), want == got ? "" : "  MISMATCH");
    ok = ok && want == got;
  }
  clients.clear();  // closes the connections before the verdict line
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"loopguard_chaos_load: paced SDK workers for scripts/chaos.sh"};
  auto* port = app.add_option("--port", o.port, "the daemon's loopback port");
  app.add_option("--port-file", o.port_file, "read the port from this file (once, at start)")
      ->excludes(port);
  app.add_option("--workers", o.workers, "workers (daemon_client each)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--swarms", o.swarms, "swarms the workers are spread over")
      ->check(CLI::Range(1, 100));
  app.add_option("--rate", o.rate, "events/s per worker")->check(CLI::Range(1.0, 100000.0));
  app.add_option("--seconds", o.seconds, "how long to send")->check(CLI::Range(0.1, 86400.0));
  app.add_option("--drain-seconds", o.drain, "longest wait for the last acknowledgements")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--fingerprints", o.fps, "fingerprints each worker cycles through")
      ->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);
  if (o.port == 0 && o.port_file.empty()) {
    std::fprintf(stderr, "chaos_load: give --port or --port-file\n");
    return 2;
  }
  if (o.swarms > o.workers) o.swarms = o.workers;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
