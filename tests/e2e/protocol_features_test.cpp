// Swarm mode end to end against the real loopguardd: the protocol features of the welcome and
// the behaviour behind each one (docs/protocol.md, "Versioning").
#include <doctest/doctest.h>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::ws_client;

namespace {

json welcome_of(ws_client& c, const std::string& swarm, const std::string& worker) {
  REQUIRE(c.hello(swarm, worker, "inc").has_value());
  const auto w = c.received("welcome");
  REQUIRE(w.size() == 1);
  return w[0];
}

}  // namespace

TEST_SUITE("e2e swarm mode") {
  TEST_CASE("the welcome lists the features; --protocol-features none lists none" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    {
      daemon_process d(dir.file(""), dir.file("a.db"));
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client c(d.port());
      CHECK(welcome_of(c, "s", "w0")["features"] ==
            json{"detections", "active_verdicts", "error_seq", "swarm_url"});
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

  TEST_CASE("/ws?swarm=S: a hello of another swarm is refused; no query is protocol v1" *
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
}
