// Greedy and broken clients against the real daemon (docs/operations.md, "Limits"): every
// message gets an answer, a close that cannot complete is torn down at its deadline, and running
// out of file descriptors pauses accepting instead of spinning, while the connections already
// open keep being served.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <fstream>
#include <memory>
#include <regex>
#include <thread>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "loopguard/protocol.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::ws_client;

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;

json one_event_batch(std::uint64_t seq, std::uint64_t fp) {
  protocol::events b;
  b.items.push_back(test::wire_event(seq == 0 ? 1 : seq, fp, double(seq), fp));
  auto j = json::parse(protocol::serialize(b));
  j["events"][0]["seq"] = seq;  // the serializer would not write a 0 itself
  return j;
}

// The value of one counter or gauge in /metrics, -1 when absent.
double metric_value(unsigned short port, const std::string& name) {
  std::string body;
  if (test::http_get(port, "/metrics", body) != 200) return -1;
  std::smatch m;
  if (!std::regex_search(body, m, std::regex("\n" + name + " ([0-9.e+]+)\n"))) return -1;
  return std::stod(m[1]);
}

// The test process's own descriptors must not run out before the daemon's.
void raise_own_fd_limit() {
  rlimit l{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &l) == 0);
  l.rlim_cur = l.rlim_max;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &l) == 0);
}

}  // namespace

TEST_SUITE("e2e broken clients") {
  TEST_CASE("seq 0 is refused by name, an empty batch (heartbeat) is answered with an ack" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client beat(d.port());
    REQUIRE(beat.hello("s", "beat", "inc") == 0u);
    beat.send(json{{"type", "events"}, {"events", json::array()}});
    const auto ack = beat.next_of("ack", 5s);
    REQUIRE(ack.has_value());
    CHECK((*ack)["seq"] == 0);  // nothing acknowledged yet
    beat.send(one_event_batch(1, 3));
    REQUIRE(beat.wait_ack(1, 5s));
    beat.send(json{{"type", "events"}, {"events", json::array()}});
    const auto again = beat.next_of("ack", 5s);
    REQUIRE(again.has_value());
    CHECK((*again)["seq"] == 1);

    ws_client zero(d.port());
    REQUIRE(zero.hello("s", "zero", "inc") == 0u);
    zero.send(one_event_batch(0, 3));
    const auto e = zero.next_of("error", 5s);
    REQUIRE(e.has_value());
    CHECK((*e)["code"] == "bad_message");
    CHECK((*e)["message"].get<std::string>().find("events[0].seq: expected an integer in 1..") !=
          std::string::npos);
    CHECK(zero.wait_closed(5s) == 1008);
  }

  TEST_CASE("a worker that stops reading is torn down at the close deadline" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const auto config = dir.file("c.json");
    // A tiny send queue and a swarm rule that declares a verdict for every repeated pair, so the
    // daemon has plenty to push to a worker that never reads.
    std::ofstream(config) << R"({"limits": {"max_send_queue": 64},
                                 "swarm": {"threshold": 2, "min_workers": 1, "critical_at": 3}})";
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", config});
    REQUIRE_MESSAGE(d.port() != 0, d.log());

    // The sleeper: a small receive window, hello, then never reads again.
    net::io_context ioc;
    beast::websocket::stream<net::ip::tcp::socket> sleeper(ioc);
    sleeper.next_layer().open(net::ip::tcp::v4());
    sleeper.next_layer().set_option(net::socket_base::receive_buffer_size(2048));
    sleeper.next_layer().connect({net::ip::make_address("127.0.0.1"), d.port()});
    sleeper.handshake("127.0.0.1:" + std::to_string(d.port()), "/ws");
    sleeper.write(net::buffer(json{
        {"type", "hello"},
        {"version", protocol::kVersion},
        {"swarm", "s"},
        {"worker", "sleeper"},
        {"incarnation", "i"}}.dump()));
    // A worker of the same swarm whose every pair of calls is a new dead end.
    ws_client feeder(d.port());
    REQUIRE(feeder.hello("s", "feeder", "inc") == 0u);
    // Small batches (4 new dead ends, 16 verdict messages each): the feeder, which reads, never
    // has more than its send queue holds.
    std::uint64_t seq = 0;
    for (int b = 0; b < 4000 && metric_value(d.port(), "loopguard_errors_sent_total") < 1; ++b) {
      protocol::events batch;
      for (int i = 0; i < 12; ++i, ++seq) {
        batch.items.push_back(test::wire_event(seq + 1, 100000 + seq / 3, double(seq), 7));
      }
      feeder.send(json::parse(protocol::serialize(batch)));
      REQUIRE_MESSAGE(feeder.wait_ack(seq, 10s), feeder.received("error").size());
    }
    REQUIRE_MESSAGE(metric_value(d.port(), "loopguard_errors_sent_total") >= 1,
                    "the sleeper's queue never overflowed");
    CHECK(metric_value(d.port(), "loopguard_connections_open") == 2);  // closing, not closed
    // Without a deadline the close waits for the sleeper forever; with one it is torn down.
    double open = 2;
    for (int i = 0; i < 150 && open != 1; ++i) {
      std::this_thread::sleep_for(100ms);
      open = metric_value(d.port(), "loopguard_connections_open");
    }
    CHECK(open == 1);
    CHECK(metric_value(d.port(), "loopguard_closes_forced_total") == 1);
    // The feeder was never disturbed.
    feeder.send(one_event_batch(seq + 1, 5));
    CHECK(feeder.wait_ack(seq + 1, 5s));
  }

  TEST_CASE(
      "out of file descriptors: the connection limit fits the open-file limit, accepting "
      "pauses instead of spinning, open connections keep working" *
      doctest::timeout(90)) {
    raise_own_fd_limit();
    test::temp_dir dir;
    constexpr unsigned long kOpenFiles = 200;  // 200 - 128 reserved: 72 connections
    daemon_process d(dir.file(""), dir.file("lg.db"), {}, {.open_files = kOpenFiles});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    CHECK(d.log().find("lowered max_connections from 1024 to 72 to fit the open-file limit 200") !=
          std::string::npos);

    // 100 workers: 72 welcomed, the others told too_many_connections, /healthz answering.
    std::vector<std::unique_ptr<ws_client>> workers;
    int welcomed = 0, refused = 0;
    for (int i = 0; i < 100; ++i) {
      auto c = std::make_unique<ws_client>(d.port());
      c->send(json{{"type", "hello"},
                   {"version", protocol::kVersion},
                   {"swarm", "s"},
                   {"worker", test::worker_name(i)},
                   {"incarnation", "i"}});
      const auto first = c->next(5s);
      REQUIRE(first.has_value());
      if ((*first)["type"] == "welcome") {
        ++welcomed;
        workers.push_back(std::move(c));
      } else {
        CHECK((*first)["code"] == "too_many_connections");
        ++refused;
      }
    }
    CHECK(welcomed == 72);
    CHECK(refused == 28);
    std::string body;
    CHECK(test::http_get(d.port(), "/healthz", body) == 200);

    // Plain connections that never send a byte take the remaining descriptors: accept() fails
    // with EMFILE, and the daemon pauses accepting instead of retrying at once.
    std::vector<std::unique_ptr<net::ip::tcp::socket>> idle;
    net::io_context ioc;
    for (int i = 0; i < 150; ++i) {
      auto s = std::make_unique<net::ip::tcp::socket>(ioc);
      s->connect({net::ip::make_address("127.0.0.1"), d.port()});  // the kernel's backlog
      idle.push_back(std::move(s));
    }
    const auto exhausted = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(1500ms);
    // The workers already connected are still served.
    workers[0]->send(one_event_batch(1, 9));
    CHECK(workers[0]->wait_ack(1, 10s));
    idle.clear();  // descriptors come back: accepting resumes
    double pauses = -1;
    for (int i = 0; i < 100 && pauses < 0; ++i) {
      std::this_thread::sleep_for(100ms);
      pauses = metric_value(d.port(), "loopguard_accept_pauses_total");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - exhausted).count();
    CHECK(pauses >= 1);
    // A pause of 100 ms each: at most ~10 a second (a spin would count hundreds of thousands).
    CHECK(pauses <= 12 * (seconds + 1));
    const auto log = d.log();
    std::size_t lines = 0;
    for (auto at = log.find("accept_failed:"); at != std::string::npos;
         at = log.find("accept_failed:", at + 1)) {
      ++lines;
    }
    CHECK(lines <= 20 * (1 + static_cast<std::size_t>(seconds / 10) + 1));  // 20 per 10 s window
  }

  TEST_CASE(
      "a worker over its event rate is slowed by back-pressure, never closed, and resent "
      "events are free" *
      doctest::timeout(60)) {
    test::temp_dir dir;
    const auto config = dir.file("c.json");
    std::ofstream(config) << R"({"limits": {"max_events_per_second": 1000}})";
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", config});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto send_all = [](ws_client& c) {
      for (std::uint64_t from = 1; from <= 3000; from += 100) {
        protocol::events batch;
        for (std::uint64_t seq = from; seq < from + 100; ++seq) {
          batch.items.push_back(test::wire_event(seq, 1 + seq % 50, double(seq), 3));
        }
        c.send(json::parse(protocol::serialize(batch)));
      }
    };
    {
      ws_client fast(d.port());
      REQUIRE(fast.hello("s", "fast", "inc") == 0u);
      send_all(fast);  // 3 s worth at once: one second's burst passes, the rest waits
      CHECK(fast.wait_ack(3000, 30s));
      CHECK(fast.received("error").empty());
    }
    const double pauses = metric_value(d.port(), "loopguard_rate_limited_total");
    CHECK(pauses >= 1);
    CHECK(metric_value(d.port(), "loopguard_rate_limited_seconds_total") >= 0.5);
    // The same incarnation again, resending everything: all duplicates, nothing to wait for.
    ws_client again(d.port());
    REQUIRE(again.hello("s", "fast", "inc") == 3000u);
    send_all(again);
    std::this_thread::sleep_for(300ms);
    again.send(json{{"type", "events"}, {"events", json::array()}});  // answered after them
    const auto ack = again.next_of("ack", 10s);
    REQUIRE(ack.has_value());
    CHECK((*ack)["seq"] == 3000);
    CHECK(metric_value(d.port(), "loopguard_rate_limited_total") == pauses);
    CHECK(metric_value(d.port(), "loopguard_events_duplicate_total") == 3000);
  }
}
