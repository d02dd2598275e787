// The SDK's daemon client against the real loopguardd: exactly-once delivery across SIGKILL,
// a daemon that is down when workers start, and an outbox overflow while it is stopped.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "../daemon/test_util.hpp"
#include "cycling_events.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/daemon_client.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::daemon_process;
using test::digest_over_http;

namespace {

constexpr std::uint64_t kClientFps = 25;

client_options options_for(unsigned short port, const std::string& swarm, int worker,
                           std::size_t outbox = 10000) {
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(port);
  o.swarm = swarm;
  o.worker = test::worker_name(worker);
  o.outbox = outbox;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  return o;
}

std::vector<std::string> listen_on(unsigned short port) {
  return {"--listen", "127.0.0.1:" + std::to_string(port)};
}

}  // namespace

TEST_SUITE("client") {
  TEST_CASE("SIGKILL at random moments with events in flight: nothing lost, nothing twice" *
            doctest::timeout(80)) {
    constexpr int kWorkers = 3;
    constexpr int kKills = 3;
    constexpr std::uint64_t kPerRound = 300;
    test::temp_dir dir;
    const std::string db = dir.file("lg.db");
    auto d = std::make_unique<daemon_process>(dir.file(""), db);
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    const unsigned short port = d->port();
    std::vector<std::unique_ptr<daemon_client>> clients;
    for (int w = 0; w < kWorkers; ++w) {
      clients.push_back(std::make_unique<daemon_client>(options_for(port, "chaos", w)));
    }
    std::mt19937 rng(20261123);
    std::uint64_t in_flight_at_kills = 0;
    for (int k = 0; k < kKills; ++k) {
      for (auto& c : clients) REQUIRE(c->wait_connected(10s));
      // Stream a round, then kill after a random share of it, without waiting for acks. The
      // daemon is stopped (SIGSTOP) a few events before the kill: acks come within a commit
      // (group commit), so without the pause everything sent might already be durable, and
      // the resend path would go untested. What is sent while it is stopped is in flight for
      // certain.
      const std::uint64_t kill_after = std::uniform_int_distribution<std::uint64_t>(50, 250)(rng);
      for (std::uint64_t i = 0; i < kPerRound; ++i) {
        for (auto& c : clients) test::send_cycling(*c, 1, kClientFps);
        if (i == kill_after) d->signal(SIGSTOP);
        if (i == kill_after + 5) {
          // Long enough for the clients to write those events (flush_delay): they reach the
          // stopped daemon's socket and die with it, so they must be resent.
          std::this_thread::sleep_for(50ms);
          for (auto& c : clients) in_flight_at_kills += c->stats().sent - c->stats().acknowledged;
          d->signal(SIGKILL);
          CHECK(d->wait(5s) == 128 + SIGKILL);
        }
      }
      d = std::make_unique<daemon_process>(dir.file(""), db, listen_on(port));
      REQUIRE_MESSAGE(d->port() == port, d->log());
    }
    CHECK(in_flight_at_kills > 0);
    const std::uint64_t total = kKills * kPerRound;
    std::uint64_t resent = 0;
    for (auto& c : clients) {
      REQUIRE_MESSAGE(c->wait_acknowledged(total, 20s), c->stats().last_error);
      resent += c->stats().resent;
      CHECK(c->stats().overflow_dropped == 0);
      CHECK(c->stats().connects >= kKills + 1);
    }
    CHECK(resent > 0);
    CHECK(digest_over_http(port, "chaos") ==
          test::cycling_digest("chaos", kWorkers, total, kClientFps));
  }

  TEST_CASE("the daemon is down when workers start: they carry on, connect later, catch up" *
            doctest::timeout(40)) {
    test::temp_dir dir;
    unsigned short port = 0;
    {  // a port nobody listens on now
      daemon_process probe(dir.file(""), dir.file("probe.db"));
      REQUIRE(probe.port() != 0);
      port = probe.port();
    }
    std::vector<std::unique_ptr<daemon_client>> clients;
    for (int w = 0; w < 2; ++w) {
      clients.push_back(std::make_unique<daemon_client>(options_for(port, "late", w)));
      test::send_cycling(*clients.back(), 40, kClientFps);  // returns at once: nobody is there
      CHECK_FALSE(clients.back()->stats().connected);
    }
    std::this_thread::sleep_for(100ms);  // a few failed attempts with backoff
    CHECK_FALSE(clients[0]->stats().last_error.empty());
    daemon_process d(dir.file(""), dir.file("lg.db"), listen_on(port));
    REQUIRE_MESSAGE(d.port() == port, d.log());
    for (auto& c : clients) {
      test::send_cycling(*c, 10, kClientFps);
      REQUIRE_MESSAGE(c->wait_acknowledged(50, 20s), c->stats().last_error);
    }
    CHECK(digest_over_http(port, "late") == test::cycling_digest("late", 2, 50, kClientFps));
  }

  TEST_CASE("SIGSTOP: every call returns, the overflow is counted exactly and declared as a gap" *
            doctest::timeout(40)) {
    constexpr std::size_t kOutbox = 50;
    constexpr std::uint64_t kBefore = 10, kDuring = 80;
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    daemon_client c(options_for(d.port(), "stopped", 0, kOutbox));
    test::send_cycling(c, kBefore, kClientFps);
    REQUIRE(c.wait_acknowledged(kBefore, 10s));
    d.signal(SIGSTOP);
    test::send_cycling(c, kDuring, kClientFps);  // every call returns although nobody reads
    const auto during = c.stats();
    CHECK(during.overflow_dropped == kDuring - kOutbox);
    CHECK(during.outbox == kOutbox);
    d.signal(SIGCONT);
    REQUIRE_MESSAGE(c.wait_acknowledged(kBefore + kDuring, 20s), c.stats().last_error);
    const auto after = c.stats();
    CHECK(after.overflow_dropped == kDuring - kOutbox);
    CHECK(after.gaps_sent >= 1);
    CHECK(after.outbox == 0);
    std::string metrics;
    REQUIRE(test::http_get(d.port(), "/metrics", metrics) == 200);
    CHECK(metrics.find("loopguard_events_lost_total " + std::to_string(kDuring - kOutbox)) !=
          std::string::npos);
  }

  TEST_CASE("a wrong token is fatal: no reconnect loop, the reason is kept" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    const std::string token_file = dir.file("token");
    { std::ofstream(token_file) << "right-token\n"; }
    std::filesystem::permissions(
        token_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--token-file", token_file});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    auto o = options_for(d.port(), "s", 0);
    o.token = "wrong";
    daemon_client c(o);
    test::send_cycling(c, 3, kClientFps);
    CHECK_FALSE(c.wait_acknowledged(3, 3s));
    const auto s = c.stats();
    CHECK(s.fatal);
    CHECK(s.last_error.rfind("unauthorized", 0) == 0);
    CHECK(s.connects == 0);
  }

  TEST_CASE("a token that does not grant the swarm is fatal too" * doctest::timeout(30)) {
    test::temp_dir dir;
    const std::string tokens = dir.file("tokens");
    { std::ofstream(tokens) << "other-swarms-token-0001 swarm=other-*\n"; }
    std::filesystem::permissions(
        tokens, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--tokens-file", tokens});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    auto o = options_for(d.port(), "s", 0);
    o.token = "other-swarms-token-0001";
    daemon_client c(o);
    test::send_cycling(c, 3, kClientFps);
    CHECK_FALSE(c.wait_acknowledged(3, 2s));
    const auto s = c.stats();
    CHECK(s.fatal);
    CHECK(s.last_error.rfind("forbidden", 0) == 0);
    CHECK(s.connects == 0);
  }

  TEST_CASE("options are checked before anything starts") {
    client_options o;
    o.url = "http://localhost:7070";
    o.swarm = "s";
    o.worker = "w";
    CHECK(validate(o).message().find("ws://") != std::string::npos);
    o.url = "ws://localhost";
    CHECK(validate(o).message().find("port") != std::string::npos);
    o.url = "ws://localhost:7070";
    CHECK(validate(o).ok());
    o.worker = std::string("w\xff", 2);
    CHECK(validate(o).message().rfind("worker", 0) == 0);
    o.worker = "";
    CHECK(validate(o).message().rfind("worker", 0) == 0);
  }
}
