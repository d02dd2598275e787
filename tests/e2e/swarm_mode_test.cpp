// Swarm mode end to end: agents that link the SDK (swarm_worker: the manager plus its daemon
// client) against the real loopguardd. No single worker repeats the dead end often enough for
// a local rule; the swarm does, and every worker of it is told, through its own verdicts.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "loopguard/swarm_worker.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::daemon_process;

namespace {

// A daemon whose swarm rule declares a warning at 5 counted calls and critical at 8.
std::unique_ptr<daemon_process> swarm_daemon(const test::temp_dir& dir) {
  const std::string config = dir.file("loopguardd.json");
  std::ofstream(config) << R"({"swarm":{"threshold":5,"critical_at":8,"min_workers":2}})";
  return std::make_unique<daemon_process>(dir.file(""), dir.file("lg.db"),
                                          std::vector<std::string>{"--config", config});
}

std::unique_ptr<swarm_worker> join(unsigned short port, const std::string& swarm,
                                   const std::string& worker) {
  auto w = std::make_unique<swarm_worker>();
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(port);
  o.swarm = swarm;
  o.worker = worker;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  REQUIRE(w->connect(o).ok());
  REQUIRE(w->client()->wait_connected(10s));
  return w;
}

// The shared dead end: the same search, the same failure. Returns the call's verdict.
verdict dead_end(swarm_worker& w) {
  const verdict v = w.on_tool_call("search", nlohmann::json{{"query", "flaky auth token"}});
  if (v.action != action::reject) w.on_tool_result("search", false, "no results");
  return v;
}

verdict healthy_step(swarm_worker& w, int i) {
  const verdict v =
      w.on_tool_call("read_file", nlohmann::json{{"path", "src/" + std::to_string(i)}});
  w.on_tool_result("read_file", true, "contents of file " + std::to_string(i));
  return v;
}

bool has_global(const verdict& v, severity level) {
  for (const auto& d : v.detections) {
    if (d.detector == detector_id::global && d.level == level) return true;
  }
  return false;
}

// Waits until every event the worker judged so far is acknowledged.
void settle(swarm_worker& w) {
  auto* c = w.client();
  REQUIRE_MESSAGE(c->wait_acknowledged(c->stats().sent, 10s), c->stats().last_error);
}

}  // namespace

TEST_SUITE("swarm mode") {
  TEST_CASE("three workers share a dead end: each is nudged, then rejected; others are not" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    auto d = swarm_daemon(dir);
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    std::vector<std::unique_ptr<swarm_worker>> swarm;
    for (int i = 0; i < 3; ++i) swarm.push_back(join(d->port(), "auth", test::worker_name(i)));
    auto outsider = join(d->port(), "billing", "w0");
    auto loner = join(d->port(), "solo", "w0");

    // Two calls each: below every local rule, six for the swarm (threshold 5).
    for (int round = 0; round < 2; ++round) {
      for (auto& w : swarm) CHECK(dead_end(*w).allowed());
    }
    for (auto& w : swarm) settle(*w);
    // One worker alone repeating it more often never trips the swarm rule (min_workers 2).
    for (int i = 0; i < 6; ++i) dead_end(*loner);
    healthy_step(*outsider, 1);
    settle(*loner);
    settle(*outsider);

    for (auto& w : swarm) {
      REQUIRE(w->client()->wait_verdicts(1, 10s));
      const verdict next = healthy_step(*w, 2);  // the next verdict carries the nudge
      CHECK(next.action == action::nudge);
      CHECK(has_global(next, severity::warn));
      CHECK(next.strongest().message.find("search") != std::string::npos);
    }
    CHECK(outsider->client()->stats().verdicts == 0);
    CHECK(loner->client()->stats().verdicts == 0);
    CHECK_FALSE(has_global(healthy_step(*outsider, 3), severity::warn));

    // Two more calls make 8: critical. The dead end is now rejected for every worker of the
    // swarm, while other calls go through.
    dead_end(*swarm[0]);
    dead_end(*swarm[1]);
    settle(*swarm[0]);
    settle(*swarm[1]);
    for (auto* w : {swarm[0].get(), swarm[2].get()}) {
      REQUIRE(w->client()->wait_verdicts(2, 10s));
      const verdict v = dead_end(*w);
      CHECK(v.action == action::reject);
      CHECK(has_global(v, severity::critical));
      CHECK(healthy_step(*w, 5).action != action::reject);
    }
    CHECK(outsider->client()->stats().verdicts == 0);
  }
}
