// The daemon side of swarm mode against the real loopguardd: the protocol features of the welcome
// and the behaviour behind each one (docs/protocol.md, "Versioning").
#include <doctest/doctest.h>

#include <signal.h>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/protocol.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::get_json;
using test::ws_client;

namespace {

// Events seq from..to of one fingerprint (the same result each time: a dead end) at t = seq, or
// at `t` when given.
std::string dead_end_batch(std::uint64_t from, std::uint64_t to, std::uint64_t fp,
                           std::optional<double> t = std::nullopt) {
  protocol::events b;
  for (std::uint64_t s = from; s <= to; ++s) {
    b.items.push_back(test::wire_event(s, fp, t.value_or(static_cast<double>(s)), 7));
  }
  return protocol::serialize(b);
}

// Two workers of `swarm` call fingerprint 42 ten times: warn is declared (and acknowledged).
void declare_warn(ws_client& a, ws_client& b) {
  a.send(dead_end_batch(1, 5, 42));
  REQUIRE(a.wait_ack(5, 5s));
  b.send(dead_end_batch(1, 5, 42));
  REQUIRE(b.wait_ack(5, 5s));
  const auto v = a.next_of("verdict", 5s);
  REQUIRE(v);
  REQUIRE((*v)["level"] == "warn");
}

json welcome_of(ws_client& c, const std::string& swarm, const std::string& worker) {
  REQUIRE(c.hello(swarm, worker, "inc").has_value());
  const auto w = c.received("welcome");
  REQUIRE(w.size() == 1);
  return w[0];
}

}  // namespace

TEST_SUITE("e2e protocol features") {
  TEST_CASE("the welcome lists the features, --protocol-features none lists none" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    {
      daemon_process d(dir.file(""), dir.file("a.db"));
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client c(d.port());
      CHECK(welcome_of(c, "s", "w0")["features"] == json{"detections", "active_verdicts",
                                                         "error_seq", "swarm_url", "observe",
                                                         "cost", "handoff"});
    }
    {
      daemon_process d(dir.file(""), dir.file("b.db"), {"--protocol-features", "none"});
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client c(d.port());
      CHECK_FALSE(welcome_of(c, "s", "w0").contains("features"));
    }
    {
      daemon_process d(dir.file(""), dir.file("c.db"),
                       {"--protocol-features", "error_seq,detections"});
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client c(d.port());
      CHECK(welcome_of(c, "s", "w0")["features"] == json{"error_seq", "detections"});
    }
    std::string out;
    CHECK(test::run_loopguardd(dir.file(""), {"--protocol-features", "nope"}, out, 10s) == 2);
    CHECK(out.find("unknown feature \"nope\"") != std::string::npos);
  }

  TEST_CASE("/ws?swarm=S: a hello of another swarm is refused, no query is protocol v1" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client same(d.port(), "/ws?swarm=a%2Fb");
    CHECK(same.hello("a/b", "w0", "i") == 0u);
    ws_client plain(d.port(), "/ws");
    CHECK(plain.hello("a/b", "w1", "i") == 0u);
    ws_client other(d.port(), "/ws?swarm=a%2Fb");
    other.send(json{
        {"type", "hello"}, {"version", 1}, {"swarm", "c"}, {"worker", "w2"}, {"incarnation", "i"}});
    const auto e = other.next_of("error", 5s);
    REQUIRE(e);
    CHECK((*e)["code"] == "bad_message");
    CHECK((*e)["message"] == "hello names swarm \"c\", but the URL names swarm \"a/b\"");
    CHECK(other.wait_closed(5s) == 1008);
  }

  TEST_CASE("upgrades on other paths get 404, a malformed swarm in the URL 400" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    std::string body;
    CHECK(test::try_upgrade(d.port(), "/", body) == 404);
    CHECK(json::parse(body)["error"] == "not found: workers connect to /ws");
    CHECK(test::try_upgrade(d.port(), "/dashboard/ws?swarm=a", body) == 404);
    CHECK(test::try_upgrade(d.port(), "/ws?swarm=a%G0", body) == 400);
    CHECK(json::parse(body)["error"] ==
          "swarm in the URL: bad percent-encoding at byte 1 (expected % and two hex digits)");
    CHECK(test::try_upgrade(d.port(), "/ws?swarm=", body) == 400);
    CHECK(test::try_upgrade(d.port(), "/ws?swarm=ok", body) == 101);
    // The daemon goes on serving.
    CHECK(test::http_get(d.port(), "/healthz", body) == 200);
  }

  TEST_CASE("without the feature swarm_url any path upgrades and the query is not checked" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--protocol-features", "none"});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    std::string body;
    CHECK(test::try_upgrade(d.port(), "/anything", body) == 101);
    ws_client c(d.port(), "/ws?swarm=a");
    CHECK(c.hello("b", "w0", "i") == 0u);
  }

  TEST_CASE("a worker connecting after a verdict was declared is told right after the welcome" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client a(d.port(), "/ws?swarm=s"), b(d.port(), "/ws?swarm=s");
    REQUIRE(a.hello("s", "a", "i") == 0u);
    REQUIRE(b.hello("s", "b", "i") == 0u);
    declare_warn(a, b);
    ws_client late(d.port(), "/ws?swarm=s");
    REQUIRE(late.hello("s", "late", "i") == 0u);
    // Every active verdict, oldest first, before anything else; as it was pushed: the exact
    // form only (both forms were declared by the same call at one level).
    const auto first = late.next(5s);
    REQUIRE(first);
    CHECK((*first)["type"] == "verdict");
    CHECK((*first)["kind"] == "exact");
    CHECK((*first)["fingerprint"] == "000000000000002a");
    CHECK((*first)["level"] == "warn");
    CHECK((*first)["calls"] == 10);
    CHECK_FALSE(late.next(300ms).has_value());
    CHECK(get_json(d.port(), "/api/swarms/s")["verdicts"].size() == 2);  // the API lists both
    ws_client other(d.port());
    REQUIRE(other.hello("other", "w", "i") == 0u);
    CHECK_FALSE(other.next(300ms).has_value());  // another swarm hears nothing
  }

  TEST_CASE("without the feature active_verdicts a late worker is not told" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--protocol-features", "none"});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client a(d.port()), b(d.port());
    REQUIRE(a.hello("s", "a", "i") == 0u);
    REQUIRE(b.hello("s", "b", "i") == 0u);
    declare_warn(a, b);
    ws_client late(d.port());
    REQUIRE(late.hello("s", "late", "i") == 0u);
    CHECK_FALSE(late.next(300ms).has_value());
  }

  TEST_CASE("SIGKILL and restart keep the active verdicts: a reconnecting worker is told" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    {
      daemon_process d(dir.file(""), dir.file("lg.db"));
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client a(d.port()), b(d.port());
      REQUIRE(a.hello("s", "a", "i") == 0u);
      REQUIRE(b.hello("s", "b", "i") == 0u);
      declare_warn(a, b);  // acknowledged: durable
      d.signal(SIGKILL);
      CHECK(d.wait(5s) == 128 + SIGKILL);
    }
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client a(d.port(), "/ws?swarm=s");
    CHECK(a.hello("s", "a", "i") == 5u);
    const auto v = a.next(5s);
    REQUIRE(v);
    CHECK((*v)["type"] == "verdict");
    CHECK((*v)["fingerprint"] == "000000000000002a");
    CHECK((*v)["level"] == "warn");
    CHECK(get_json(d.port(), "/api/swarms/s")["verdicts"].size() == 2);
    // The restored daemon lifts them as the uninterrupted one would.
    a.send(dead_end_batch(6, 6, 99, 5000.0));
    const auto lifted = a.next_of("verdict", 5s);
    REQUIRE(lifted);
    CHECK((*lifted)["level"] == "none");
    CHECK((*lifted)["fingerprint"] == "000000000000002a");
  }

  TEST_CASE("lifting by time sends level none to the connected workers" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client a(d.port()), b(d.port());
    REQUIRE(a.hello("s", "a", "i") == 0u);
    REQUIRE(b.hello("s", "b", "i") == 0u);
    declare_warn(a, b);
    REQUIRE(b.next_of("verdict", 5s));
    // One call much later: the clock moves a window on, the dead end's calls leave it.
    a.send(dead_end_batch(6, 6, 99, 5000.0));
    for (ws_client* c : {&a, &b}) {
      const auto lifted = c->next_of("verdict", 5s);
      REQUIRE(lifted);
      CHECK((*lifted)["level"] == "none");
      CHECK((*lifted)["kind"] == "exact");
      CHECK((*lifted)["fingerprint"] == "000000000000002a");
      CHECK((*lifted)["calls"] == 0);
      CHECK((*lifted)["message"].get<std::string>().find("looks cleared") != std::string::npos);
    }
    REQUIRE(a.wait_ack(6, 5s));
    CHECK(get_json(d.port(), "/api/swarms/s")["verdicts"].empty());
    std::string metrics;
    REQUIRE(test::http_get(d.port(), "/metrics", metrics) == 200);
    CHECK(metrics.find("loopguard_verdicts_lifted_total 2\n") != std::string::npos);
  }

  TEST_CASE("detection messages: shown per worker in the API with the feature, refused without" *
            doctest::timeout(30)) {
    const json detection{{"type", "detection"},
                         {"detector", "exact"},
                         {"level", "critical"},
                         {"count", 5},
                         {"tool", "bash"},
                         {"message", "stop"},
                         {"t", 12.5}};
    test::temp_dir dir;
    {
      daemon_process d(dir.file(""), dir.file("a.db"));
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client a(d.port(), "/ws?swarm=s"), b(d.port(), "/ws?swarm=s");
      REQUIRE(a.hello("s", "a", "i") == 0u);
      REQUIRE(b.hello("s", "b", "i") == 0u);
      a.send(dead_end_batch(1, 1, 1));
      REQUIRE(a.wait_ack(1, 5s));
      b.send(detection);
      b.send(dead_end_batch(1, 1, 2));  // processed after the detection, on the same connection
      REQUIRE(b.wait_ack(1, 5s));
      const auto detail = get_json(d.port(), "/api/swarms/s");
      CHECK(detail["worker_names"] == json{"a", "b"});
      REQUIRE(detail["workers"].size() == 2);
      CHECK(detail["workers"][0] == json{{"name", "a"},
                                         {"mode", "enforce"},
                                         {"detections", 0},
                                         {"detection_counts", json::object()},
                                         {"last_detections", json::array()}});
      const json& w = detail["workers"][1];
      CHECK(w["name"] == "b");
      CHECK(w["detections"] == 1);
      CHECK(w["detection_counts"] == json{{"exact", {{"critical", 1}}}});
      REQUIRE(w["last_detections"].size() == 1);
      CHECK(w["last_detections"][0] == json{{"detector", "exact"},
                                            {"level", "critical"},
                                            {"count", 5},
                                            {"tool", "bash"},
                                            {"message", "stop"},
                                            {"t", 12.5}});
      std::string metrics;
      REQUIRE(test::http_get(d.port(), "/metrics", metrics) == 200);
      CHECK(metrics.find("loopguard_local_detections_total 1\n") != std::string::npos);
    }
    daemon_process d(dir.file(""), dir.file("b.db"), {"--protocol-features", "none"});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client c(d.port());
    REQUIRE(c.hello("s", "c", "i") == 0u);
    c.send(detection);
    const auto e = c.next_of("error", 5s);
    REQUIRE(e);
    CHECK((*e)["code"] == "bad_message");
    CHECK((*e)["message"] == "a worker may not send detection");
    CHECK(c.wait_closed(5s) == 1008);
  }

  TEST_CASE("an error about one event of a batch carries its seq, without error_seq it does not" *
            doctest::timeout(30)) {
    protocol::events b;
    for (std::uint64_t s = 1; s <= 3; ++s) b.items.push_back(test::wire_event(s, 1, 1.0));
    b.items[1].tool = std::string(protocol::kMaxToolBytes + 1, 'x');
    test::temp_dir dir;
    for (const bool with : {true, false}) {
      CAPTURE(with);
      daemon_process d(dir.file(""), dir.file(with ? "a.db" : "b.db"),
                       {"--protocol-features", with ? "error_seq" : "none"});
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client c(d.port());
      REQUIRE(c.hello("s", "w", "i") == 0u);
      c.send(protocol::serialize(b));
      auto e = c.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "bad_message");
      CHECK((*e)["message"].get<std::string>().starts_with("events[1].tool: "));
      CHECK(e->contains("seq") == with);
      if (with) CHECK((*e)["seq"] == 2);
      CHECK(c.wait_closed(5s) == 1008);
      ws_client bin(d.port());
      REQUIRE(bin.hello("s", "w2", "i") == 0u);
      bin.send(protocol::encode_binary(b), /*binary=*/true);
      e = bin.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["message"] == "binary batch: event 1 is truncated or too long");
      CHECK(e->contains("seq") == with);
      if (with) CHECK((*e)["seq"] == 2);
    }
  }
}
