// Retention against the real loopguardd with tiny idle times (docs/operations.md,
// "Retention"): an expired incarnation is refused with incarnation_expired, the SDK client goes
// on as a new incarnation declaring a gap (nothing counted twice), an idle swarm becomes a
// tombstone whose spend survives restarts and keeps its budget going.
#include <doctest/doctest.h>

#include <signal.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <fstream>
#include <thread>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/daemon_client.hpp"
#include "loopguard/hex.hpp"
#include "state/shared_economics_state.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::daemon_process;
using test::digest_over_http;

namespace {

protocol::event nth_event(std::uint64_t seq, std::uint64_t tokens = 0) {
  auto e = test::wire_event(seq, 1 + seq % 7, double(seq), 1000 + seq % 7);
  e.spent = {tokens, 0};
  return e;
}

// A config file with retention idle times in seconds (0: off), swept every 50 ms, and a swarm
// budget of 1000 tokens (warn at 800, critical at 1000).
std::string write_config(const test::temp_dir& dir, int incarnation_idle, int swarm_idle,
                         int expired_kept = 7776000) {
  const std::string path = dir.file("retention.json");
  const nlohmann::json retention{{"incarnation_idle_s", incarnation_idle},
                                 {"swarm_idle_s", swarm_idle},
                                 {"expired_kept_s", expired_kept},
                                 {"sweep_interval_ms", 50}};
  std::ofstream(path) << nlohmann::json{{"retention", retention},
                                        {"swarm", {{"budget", {{"tokens", 1000}}}}}}
                             .dump();
  return path;
}

client_options retention_options(unsigned short port, const std::string& swarm,
                                 const std::string& incarnation = "") {
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(port);
  o.swarm = swarm;
  o.worker = "w0";
  o.incarnation = incarnation;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  return o;
}

nlohmann::json swarm_over_http(unsigned short port, const std::string& swarm) {
  std::string body;
  if (test::http_get(port, "/api/swarms/" + swarm, body) != 200) return {};
  return nlohmann::json::parse(body, nullptr, false);
}

// The value of an unlabelled metric line, or -1.
double metric(unsigned short port, const std::string& name) {
  std::string body;
  if (test::http_get(port, "/metrics", body) != 200) return -1;
  const auto at = body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + name.size() + 2));
}

template <class Pred>
bool eventually(Pred p, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (p()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return p();
}

std::vector<std::string> flags(const std::string& config, unsigned short port = 0) {
  std::vector<std::string> out{"--config", config};
  if (port != 0) {
    out.push_back("--listen");
    out.push_back("127.0.0.1:" + std::to_string(port));
  }
  return out;
}

// A raw hello of `incarnation`: the error code it gets and the close code, or "welcome".
std::pair<std::string, int> hello_of(unsigned short port, const std::string& swarm,
                                     const std::string& incarnation) {
  test::ws_client raw(port);
  raw.send(nlohmann::json{{"type", "hello"},
                          {"version", protocol::kVersion},
                          {"swarm", swarm},
                          {"worker", "w0"},
                          {"incarnation", incarnation}});
  const auto m = raw.next(5s);
  if (!m) return {"nothing", 0};
  if (m->value("type", "") == "welcome") return {"welcome", 0};
  return {m->value("code", ""), raw.wait_closed(5s).value_or(0)};
}

}  // namespace

TEST_SUITE("retention e2e") {
  TEST_CASE("an expired incarnation is refused, the client goes on as a new one, counted once" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const auto config = write_config(dir, 1, 0);
    const std::string db = dir.file("lg.db");
    auto d = std::make_unique<daemon_process>(dir.file(""), db, flags(config));
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    const unsigned short port = d->port();
    daemon_client c(retention_options(port, "s", "first"));
    for (std::uint64_t i = 1; i <= 10; ++i) c.send(nth_event(i));
    REQUIRE_MESSAGE(c.wait_acknowledged(10, 10s), c.stats().last_error);
    // The daemon goes away; the worker goes on calling (11..15 wait in its outbox) and stays
    // away longer than incarnation_idle_s.
    d->signal(SIGTERM);
    REQUIRE(d->wait(10s) == 0);
    d.reset();
    for (std::uint64_t i = 11; i <= 15; ++i) c.send(nth_event(i));
    std::this_thread::sleep_for(1500ms);
    d = std::make_unique<daemon_process>(dir.file(""), db, flags(config, port));
    REQUIRE_MESSAGE(d->port() == port, d->log());
    // At start the daemon expired "first": the client is refused, starts a new incarnation and
    // declares 1..15 lost; what it sends from then on is acknowledged and counted.
    REQUIRE_MESSAGE(eventually([&] { return c.stats().incarnations == 2; }, 15s),
                    c.stats().last_error);
    for (std::uint64_t i = 16; i <= 20; ++i) c.send(nth_event(i));
    REQUIRE_MESSAGE(c.wait_acknowledged(20, 15s), c.stats().last_error);
    const auto s = c.stats();
    CHECK(s.incarnations == 2);
    CHECK(s.incarnation != "first");
    CHECK(s.expired_dropped == 5);
    CHECK(s.resent == 0);  // 11..15 were never sent again
    daemon::shared_economics_state want;
    for (std::uint64_t i : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17, 18, 19, 20}) {
      const auto e = nth_event(i);
      want.apply({"s", "w0", e.tool, e.summary, e.exact, e.structural, e.result, e.ok, e.t});
    }
    CHECK(digest_over_http(port, "s") == to_hex(want.digest("s")));
    CHECK(metric(port, "loopguard_incarnations_expired_total") == 1);
    CHECK(metric(port, "loopguard_expired_incarnations") == 1);
    CHECK(metric(port, "loopguard_events_lost_total") == 15);
    CHECK(d->log().find("expired 1 idle incarnations") != std::string::npos);
    // Any later hello of the old incarnation gets the specific code and 1008.
    CHECK(hello_of(port, "s", "first") == std::pair<std::string, int>{"incarnation_expired", 1008});
    // A restart keeps it expired.
    d->signal(SIGTERM);
    REQUIRE(d->wait(10s) == 0);
    d = std::make_unique<daemon_process>(dir.file(""), db, flags(config, port));
    REQUIRE_MESSAGE(d->port() == port, d->log());
    CHECK(hello_of(port, "s", "first") == std::pair<std::string, int>{"incarnation_expired", 1008});
    CHECK(digest_over_http(port, "s") == to_hex(want.digest("s")));
    CHECK(hello_of(port, "s", "brand-new").first == "welcome");
  }

  TEST_CASE("an idle swarm becomes a tombstone: its spend survives a restart, its budget goes on" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const auto config = write_config(dir, 1, 1);
    const std::string db = dir.file("lg.db");
    auto d = std::make_unique<daemon_process>(dir.file(""), db, flags(config));
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    const unsigned short port = d->port();
    {
      daemon_client c(retention_options(port, "paid"));
      for (std::uint64_t i = 1; i <= 9; ++i) c.send(nth_event(i, 100));  // 900 tokens: warn
      REQUIRE_MESSAGE(c.wait_acknowledged(9, 10s), c.stats().last_error);
      // Connected, it never expires, however long it stays.
      std::this_thread::sleep_for(1500ms);
      CHECK_FALSE(swarm_over_http(port, "paid").contains("expired"));
      CHECK(swarm_over_http(port, "paid").value("fingerprints", 0) > 0);
    }
    REQUIRE(eventually([&] { return swarm_over_http(port, "paid").contains("expired"); }, 10s));
    const auto tomb = swarm_over_http(port, "paid");
    CHECK(tomb["fingerprints"] == 0);
    CHECK(tomb["spent"]["tokens"] == 900);
    CHECK(tomb["budget"]["level"] == "warn");
    CHECK(metric(port, "loopguard_swarms_expired_total") == 1);
    CHECK(metric(port, "loopguard_swarm_tombstones") == 1);
    CHECK(metric(port, "loopguard_swarms") == 0);
    CHECK(d->log().find("1 idle swarms") != std::string::npos);

    d->signal(SIGTERM);
    REQUIRE(d->wait(10s) == 0);
    d = std::make_unique<daemon_process>(dir.file(""), db, flags(config, port));
    REQUIRE_MESSAGE(d->port() == port, d->log());
    const auto restored = swarm_over_http(port, "paid");
    CHECK(restored.contains("expired"));
    CHECK(restored["spent"]["tokens"] == 900);

    // The swarm comes back: its budget goes on from 900, not from 0.
    daemon_client again(retention_options(port, "paid"));
    again.send(nth_event(1, 100));
    // First the swarm's active verdicts after the welcome: its budget, still at warn; then its
    // event takes the budget to critical.
    REQUIRE_MESSAGE(again.wait_verdicts(2, 10s), again.stats().last_error);
    const auto v = again.take_verdicts();
    REQUIRE(v.size() == 2);
    CHECK(v[0].kind == "budget");
    CHECK(v[0].level == severity::warn);
    CHECK(v[1].kind == "budget");
    CHECK(v[1].level == severity::critical);
    REQUIRE(again.wait_acknowledged(1, 10s));
    const auto live = swarm_over_http(port, "paid");
    CHECK_FALSE(live.contains("expired"));
    CHECK(live["spent"]["tokens"] == 1000);
    CHECK(live["budget"]["level"] == "critical");
  }

  TEST_CASE("what short-lived workers leave behind stays bounded: all of it expires" *
            doctest::timeout(60)) {
    constexpr int kRounds = 3, kWorkers = 20;
    test::temp_dir dir;
    const auto config = write_config(dir, 1, 1, 1);
    const std::string db = dir.file("lg.db");
    daemon_process d(dir.file(""), db, flags(config));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    for (int round = 0; round < kRounds; ++round) {
      // A run: its own swarm id, every worker a new incarnation that sends 3 events and leaves.
      const std::string swarm = "run-" + std::to_string(round);
      for (int w = 0; w < kWorkers; ++w) {
        test::ws_client c(d.port());
        REQUIRE(c.hello(swarm, test::worker_name(w), swarm + "-" + std::to_string(w)));
        protocol::events b;
        for (std::uint64_t seq = 1; seq <= 3; ++seq) b.items.push_back(nth_event(seq));
        c.send(protocol::serialize(b));
        REQUIRE(c.wait_ack(3, 5s));
      }
      CHECK(metric(d.port(), "loopguard_swarms") >= 1);
      // Held while it runs; gone once idle: no sequence number, no swarm state, no record.
      REQUIRE(eventually(
          [&] {
            return metric(d.port(), "loopguard_incarnations") == 0 &&
                   metric(d.port(), "loopguard_swarms") == 0 &&
                   metric(d.port(), "loopguard_expired_incarnations") == 0;
          },
          10s));
      CHECK(metric(d.port(), "loopguard_swarm_tombstones") == round + 1);
      CHECK(metric(d.port(), "loopguard_fingerprints") == 0);
    }
    CHECK(metric(d.port(), "loopguard_incarnations_expired_total") == kRounds * kWorkers);
    CHECK(metric(d.port(), "loopguard_expired_incarnations_forgotten_total") == kRounds * kWorkers);
    CHECK(metric(d.port(), "loopguard_swarms_expired_total") == kRounds);
    d.signal(SIGTERM);
    REQUIRE(d.wait(10s) == 0);
    // On disk too: one tombstone row per run, nothing else.
    SQLite::Database file(db);
    CHECK(file.execAndGet("SELECT count(*) FROM sequences").getInt() == 0);
    CHECK(file.execAndGet("SELECT count(*) FROM expired_incarnations").getInt() == 0);
    CHECK(SQLite::Database(db + "-rows").execAndGet("SELECT count(*) FROM fingerprints").getInt() ==
          0);
    CHECK(file.execAndGet("SELECT count(*) FROM workers").getInt() == 0);
    CHECK(file.execAndGet("SELECT count(*) FROM swarm_seen").getInt() == 0);
    CHECK(file.execAndGet("SELECT count(*) FROM swarms WHERE expired IS NOT NULL").getInt() ==
          kRounds);
    CHECK(file.execAndGet("SELECT count(*) FROM swarms").getInt() == kRounds);
  }
}
