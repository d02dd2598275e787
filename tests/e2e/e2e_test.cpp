// End to end: the real loopguardd binary on an ephemeral loopback port, real WebSocket
// clients. Every daemon is killed by PID and reaped by daemon_process.
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
#include "loopguard/protocol.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::digest_over_http;
using test::get_json;
using test::ws_client;

namespace {

json batch(std::uint64_t from, std::uint64_t to, std::uint64_t fps) {
  protocol::events b;
  for (std::uint64_t s = from; s <= to; ++s)
    b.items.push_back(test::cycling_event(s, fps, double(s)));
  return json::parse(protocol::serialize(b));
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a global doom loop reaches every worker of the swarm and no other swarm" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    std::vector<std::unique_ptr<ws_client>> a;
    for (int i = 0; i < 3; ++i) {
      a.push_back(std::make_unique<ws_client>(d.port()));
      REQUIRE(a.back()->hello("a", test::worker_name(i), "inc") == 0u);
    }
    ws_client b(d.port());
    REQUIRE(b.hello("b", "w0", "inc") == 0u);
    // The same call in swarm b: 5 calls only, and b is separate anyway.
    b.send(batch(1, 5, 1));
    REQUIRE(b.wait_ack(5, 5s));
    // 4 calls from each worker of a: the 10th crosses the threshold.
    for (auto& c : a) c->send(batch(1, 4, 1));
    for (auto& c : a) {
      const auto v = c->next_of("verdict", 5s);
      REQUIRE(v.has_value());
      CHECK((*v)["swarm"] == "a");
      CHECK((*v)["level"] == "warn");
      CHECK((*v)["calls"] == 10);
      CHECK((*v)["tool"] == "search");
      CHECK((*v)["message"].get<std::string>().find("`search`") != std::string::npos);
    }
    for (auto& c : a) REQUIRE(c->wait_ack(4, 5s));
    b.send(batch(6, 6, 1));
    REQUIRE(b.wait_ack(6, 5s));
    CHECK(b.received("verdict").empty());
    const auto detail = get_json(d.port(), "/api/swarms/a");
    REQUIRE_FALSE(detail["verdicts"].empty());  // exact, and structural (not pushed twice)
    CHECK(detail["verdicts"][0]["kind"] == "exact");
    CHECK(detail["worker_names"].size() == 3);
    CHECK(get_json(d.port(), "/api/swarms/b")["verdicts"].empty());
  }

  TEST_CASE("the worker whose batch declares a verdict reads the verdict before that ack" *
            doctest::timeout(30)) {
    // A worker that waits for its ack and then looks at its verdicts must find them there.
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    for (int round = 0; round < 10; ++round) {
      const std::string swarm = "order" + std::to_string(round);
      ws_client first(d.port()), second(d.port());
      REQUIRE(first.hello(swarm, "w0", "inc") == 0u);
      REQUIRE(second.hello(swarm, "w1", "inc") == 0u);
      first.send(batch(1, 9, 1));
      REQUIRE(first.wait_ack(9, 5s));
      second.send(batch(1, 1, 1));  // the 10th call: the threshold
      std::optional<json> m;
      do {
        m = second.next(5s);
      } while (m && (*m)["type"] != "verdict" && (*m)["type"] != "ack");
      REQUIRE(m.has_value());
      CHECK_MESSAGE((*m)["type"] == "verdict", "round ", round, ": ", m->dump());
      REQUIRE(second.wait_ack(1, 5s));
    }
  }

  TEST_CASE("group commit: a batch is acknowledged without waiting for the interval" *
            doctest::timeout(60)) {
    // With an interval of a minute, every ack below can only come from the batch asking for
    // a commit itself (each one within 10 s: a tick would take 60).
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--checkpoint-interval", "60000"});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client w(d.port());
    REQUIRE(w.hello("lone", "w0", "inc") == 0u);
    for (std::uint64_t seq = 1; seq <= 20; ++seq) {
      w.send(batch(seq, seq, 5));
      REQUIRE_MESSAGE(w.wait_ack(seq, 10s), "no ack for batch ", seq);
    }
  }

  TEST_CASE("SIGTERM drains and checkpoints, a restart keeps everything" * doctest::timeout(30)) {
    test::temp_dir dir;
    std::string before;
    {
      daemon_process d(dir.file(""), dir.file("lg.db"));
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client w0(d.port()), w1(d.port());
      REQUIRE(w0.hello("s", "w0", "i0") == 0u);
      REQUIRE(w1.hello("s", "w1", "i1") == 0u);
      w0.send(batch(1, 30, 7));
      w1.send(batch(1, 30, 7));
      REQUIRE(w0.wait_ack(30, 5s));
      REQUIRE(w1.wait_ack(30, 5s));
      before = digest_over_http(d.port(), "s");
      CHECK(before == test::cycling_digest("s", 2, 30, 7));
      d.signal(SIGTERM);
      CHECK(w0.wait_closed(5s) == 1001);  // going away
      const auto code = d.wait(10s);
      REQUIRE_MESSAGE(code.has_value(), d.log());
      CHECK_MESSAGE(*code == 0, d.log());
    }
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    CHECK(digest_over_http(d.port(), "s") == before);
    ws_client w0(d.port());
    CHECK(w0.hello("s", "w0", "i0") == 30u);
  }

  TEST_CASE("kill -9 mid-stream: resent events count exactly once" * doctest::timeout(60)) {
    constexpr int kWorkers = 3;
    constexpr std::uint64_t kEvents = 600, kBatch = 20, kFps = 25;
    test::temp_dir dir;
    const std::string db = dir.file("lg.db");
    {
      daemon_process d(dir.file(""), db);
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      std::vector<std::unique_ptr<ws_client>> ws;
      for (int w = 0; w < kWorkers; ++w) {
        ws.push_back(std::make_unique<ws_client>(d.port()));
        REQUIRE(ws.back()->hello("chaos", test::worker_name(w), "inc") == 0u);
      }
      // Stream without waiting for acks; kill once some (not all) are acknowledged.
      for (std::uint64_t s = 1; s <= kEvents; s += kBatch) {
        for (auto& c : ws) c->send(batch(s, s + kBatch - 1, kFps));
        if (s == 1 + 10 * kBatch) REQUIRE(ws[0]->wait_ack(kBatch, 5s));
        if (s == 1 + 15 * kBatch) break;
      }
      d.signal(SIGKILL);
      CHECK(d.wait(5s) == 128 + SIGKILL);
      CHECK(ws[0]->last_ack() < kEvents);
    }
    daemon_process d(dir.file(""), db);
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    std::vector<std::unique_ptr<ws_client>> ws;
    for (int w = 0; w < kWorkers; ++w) {
      ws.push_back(std::make_unique<ws_client>(d.port()));
      const auto last = ws.back()->hello("chaos", test::worker_name(w), "inc");
      REQUIRE(last.has_value());
      // Resend from one batch before the acknowledged point too: duplicates must not count.
      const std::uint64_t from = *last > kBatch ? *last + 1 - kBatch : 1;
      for (std::uint64_t s = from; s <= kEvents; s += kBatch) {
        ws.back()->send(batch(s, std::min(s + kBatch - 1, kEvents), kFps));
      }
    }
    for (auto& c : ws) REQUIRE(c->wait_ack(kEvents, 10s));
    CHECK(digest_over_http(d.port(), "chaos") ==
          test::cycling_digest("chaos", kWorkers, kEvents, kFps));
    const auto sum = get_json(d.port(), "/api/swarms");
    CHECK(sum["swarms"][0]["calls"] == kWorkers * kEvents);
  }

  TEST_CASE("limits: an error message and a close code, and other connections keep working" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    std::ofstream(dir.file("token")) << "s3cret\n";
    std::filesystem::permissions(dir.file("token"), std::filesystem::perms::owner_read);
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--token-file", dir.file("token"), "--idle-timeout", "2000"});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client good(d.port());
    REQUIRE(good.hello("s", "good", "i", "s3cret") == 0u);

    SUBCASE("a frame over the limit: frame_too_large, 1009") {
      ws_client c(d.port());
      c.send(std::string(protocol::kMaxFrameBytes + 10, ' '));
      const auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "frame_too_large");
      CHECK(c.wait_closed(5s) == 1009);
    }
    SUBCASE("a batch over the limit: batch_too_large, 1009") {
      ws_client c(d.port());
      REQUIRE(c.hello("s", "big", "i", "s3cret") == 0u);
      c.send(batch(1, protocol::kMaxBatchEvents + 1, 3));
      const auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "batch_too_large");
      CHECK(c.wait_closed(5s) == 1009);
    }
    SUBCASE("a wrong token: unauthorized, 1008") {
      ws_client c(d.port());
      c.send(json{{"type", "hello"},
                  {"version", 1},
                  {"swarm", "s"},
                  {"worker", "x"},
                  {"incarnation", "i"},
                  {"token", "nope"}});
      const auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "unauthorized");
      CHECK(c.wait_closed(5s) == 1008);
    }
    SUBCASE("an undeclared gap: sequence_gap; a declared one is counted") {
      ws_client c(d.port());
      REQUIRE(c.hello("s", "gappy", "i", "s3cret") == 0u);
      c.send(batch(1, 2, 3));
      REQUIRE(c.wait_ack(2, 5s));
      c.send(json{{"type", "gap"}, {"from", 3}, {"to", 9}});
      c.send(batch(10, 10, 3));
      REQUIRE(c.wait_ack(10, 5s));
      c.send(batch(12, 12, 3));
      const auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "sequence_gap");
      CHECK(c.wait_closed(5s) == 1008);
      std::string metrics;
      REQUIRE(test::http_get(d.port(), "/metrics", metrics) == 200);
      CHECK(metrics.find("loopguard_gaps_total 1\n") != std::string::npos);
      CHECK(metrics.find("loopguard_events_lost_total 7\n") != std::string::npos);
    }
    SUBCASE("an idle connection: idle_timeout") {
      ws_client c(d.port());
      // `good` stays active meanwhile (a batch every ~100 ms, far inside the 2 s timeout even on
      // a loaded machine); `c` says nothing for longer than the timeout.
      for (std::uint64_t s = 1; s <= 25; ++s) {
        good.send(batch(s, s, 1));
        REQUIRE(good.wait_ack(s, 5s));
        std::this_thread::sleep_for(100ms);
      }
      const auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "idle_timeout");
      CHECK(c.wait_closed(5s) == 1008);
    }
    SUBCASE("events before hello: expected_hello") {
      ws_client c(d.port());
      c.send(batch(1, 1, 1));
      const auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "expected_hello");
    }
    // The good connection is unaffected.
    const auto next = good.last_ack() + 1;
    good.send(batch(next, next, 1));
    CHECK(good.wait_ack(next, 5s));
  }

  TEST_CASE("the connection limit: too_many_connections, 1013, the others keep working" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    std::ofstream(dir.file("config.json")) << R"({"limits": {"max_connections": 2}})";
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", dir.file("config.json")});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client first(d.port());
    REQUIRE(first.hello("s", "w1", "i1") == 0u);
    ws_client second(d.port());
    REQUIRE(second.hello("s", "w2", "i2") == 0u);
    ws_client third(d.port());
    const auto e = third.next_of("error", 5s);
    REQUIRE(e);
    CHECK((*e)["code"] == "too_many_connections");
    CHECK(third.wait_closed(5s) == 1013);
    for (ws_client* c : {&first, &second}) {
      c->send(batch(1, 1, 1));
      CHECK(c->wait_ack(1, 5s));
    }
  }

  TEST_CASE("binary batches, swarm_complete and the HTTP endpoints" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client a(d.port()), b(d.port());
    REQUIRE(a.hello("done", "a", "i") == 0u);
    REQUIRE(b.hello("done", "b", "i") == 0u);
    protocol::events bin;
    for (std::uint64_t s = 1; s <= 8; ++s)
      bin.items.push_back(test::cycling_event(s, 2, double(s)));
    a.send(protocol::encode_binary(bin), /*binary=*/true);
    REQUIRE(a.wait_ack(8, 5s));
    CHECK(get_json(d.port(), "/api/swarms/done")["calls"] == 8);
    b.send(json{{"type", "swarm_complete"}, {"swarm", "done"}});
    const auto done = a.next_of("swarm_complete", 5s);
    REQUIRE(done);
    CHECK((*done)["swarm"] == "done");
    get_json(d.port(), "/api/swarms/done", 404);
    CHECK(get_json(d.port(), "/api/swarms")["swarms"].empty());
    std::string body;
    CHECK(test::http_get(d.port(), "/healthz", body) == 200);
    CHECK(body == "ok\n");
    CHECK(test::http_get(d.port(), "/metrics", body) == 200);
    for (const char* name : {"loopguard_events_total 8", "loopguard_connections_open 2",
                             "loopguard_checkpoint_seconds_bucket", "loopguard_evictions_total",
                             "loopguard_verdicts_total"}) {
      CHECK_MESSAGE(body.find(name) != std::string::npos, name);
    }
    CHECK(test::http_get(d.port(), "/nope", body) == 404);
  }

  TEST_CASE("refused databases: loopguardd exits 1 with a clear message, file untouched" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    const auto path = dir.file("bad.db");
    std::ofstream(path) << "definitely not sqlite, but long enough to have a header";
    const auto bytes = test::read_bytes(path);
    std::string out;
    CHECK(test::run_loopguardd(dir.file(""), {"--listen", "127.0.0.1:0", "--db", path}, out, 10s) ==
          1);
    CHECK(out.find("not a SQLite database") != std::string::npos);
    CHECK(test::read_bytes(path) == bytes);
  }
}
