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
}
