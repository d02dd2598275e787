// Swarm mode end to end: agents that link the SDK (swarm_worker: the manager plus its daemon
// client) against the real loopguardd. No single worker repeats the dead end often enough for
// a local rule; the swarm does, and every worker of it is told, through its own verdicts.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "loopguard/swarm_worker.hpp"
#include "swarm_workers.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::daemon_process;
using test::join;
using test::settle;

namespace {

// A daemon whose swarm rule declares a warning at 5 counted calls and critical at 8.
std::unique_ptr<daemon_process> swarm_daemon(const test::temp_dir& dir,
                                             std::vector<std::string> extra = {}) {
  const std::string config = dir.file("loopguardd.json");
  std::ofstream(config) << R"({"swarm":{"threshold":5,"critical_at":8,"min_workers":2}})";
  std::vector<std::string> args{"--config", config};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<daemon_process>(dir.file(""), dir.file("lg.db"), std::move(args));
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

manager_config observing() {
  manager_config c;
  c.mode = guard_mode::observe;
  return c;
}

// The `workers` entry of `worker` in GET /api/swarms/{swarm}; null when it is not listed.
nlohmann::json api_worker(unsigned short port, const std::string& swarm,
                          const std::string& worker) {
  std::string body;
  REQUIRE(test::http_get(port, "/api/swarms/" + swarm, body) == 200);
  const auto detail = nlohmann::json::parse(body);
  for (const auto& x : detail.at("workers")) {
    if (x.at("name") == worker) return x;
  }
  FAIL("no worker " << worker << " in " << body);
  return nullptr;
}

}  // namespace

TEST_SUITE("swarm mode") {
  TEST_CASE("three workers share a dead end: each is nudged, then rejected, others are not" *
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

    // A fourth worker joining now is told at once: the active verdicts follow its welcome.
    auto late = join(d->port(), "auth", "w3");
    REQUIRE(late->client()->wait_verdicts(1, 10s));
    CHECK(has_global(healthy_step(*late, 4), severity::warn));

    // Two more calls make 8: critical. The dead end is now rejected for every worker of the
    // swarm, the late one included, while other calls go through.
    dead_end(*swarm[0]);
    dead_end(*swarm[1]);
    settle(*swarm[0]);
    settle(*swarm[1]);
    for (auto* w : {swarm[0].get(), swarm[2].get(), late.get()}) {
      REQUIRE(w->client()->wait_verdicts(2, 10s));
      const verdict v = dead_end(*w);
      CHECK(v.action == action::reject);
      CHECK(has_global(v, severity::critical));
      CHECK(healthy_step(*w, 5).action != action::reject);
    }
    CHECK(outsider->client()->stats().verdicts == 0);
  }

  TEST_CASE("local detections are reported to the daemon and shown per worker" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    auto d = swarm_daemon(dir);
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    auto w = join(d->port(), "local", "w0");
    bool warned = false;
    for (int i = 0; i < 8 && !warned; ++i) warned = !dead_end(*w).allowed();
    REQUIRE(warned);  // the manager's own rule (exact repeats) fired
    settle(*w);
    for (int i = 0; i < 500 && w->client()->stats().detections_sent == 0; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    REQUIRE(w->client()->stats().detections_sent > 0);

    // The daemon shows them under the worker that reported them (docs/operations.md).
    const std::uint64_t sent = w->client()->stats().detections_sent;
    nlohmann::json worker;
    std::string body;
    for (int i = 0; i < 500; ++i) {
      REQUIRE(test::http_get(d->port(), "/api/swarms/local", body) == 200);
      const auto detail = nlohmann::json::parse(body);
      for (const auto& x : detail.at("workers")) {
        if (x.at("name") == "w0") worker = x;
      }
      if (!worker.is_null() && worker.at("detections").get<std::uint64_t>() >= sent) break;
      std::this_thread::sleep_for(10ms);
    }
    REQUIRE_MESSAGE(!worker.is_null(), body);
    CHECK(worker.at("detections").get<std::uint64_t>() == sent);
    const auto& last = worker.at("last_detections");
    REQUIRE_FALSE(last.empty());
    CHECK(last.back().at("tool") == "search");
    CHECK(last.back().at("message").get<std::string>().find("[Loopguard]") == 0);
  }

  TEST_CASE("against a protocol v1 daemon the client sends no detections and keeps its link" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    auto d = swarm_daemon(dir, {"--protocol-features", "none"});
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    auto a = join(d->port(), "v1", "w0");
    auto b = join(d->port(), "v1", "w1");
    CHECK(a->client()->stats().features.empty());

    // Local detections happen but are not reported: the daemon would refuse them.
    bool warned = false;
    for (int i = 0; i < 8 && !warned; ++i) warned = !dead_end(*a).allowed();
    REQUIRE(warned);
    for (int i = 0; i < 3; ++i) dead_end(*b);
    settle(*a);
    settle(*b);
    // The swarm verdict still reaches both workers (verdicts are protocol v1).
    REQUIRE(b->client()->wait_verdicts(1, 10s));
    CHECK(has_global(healthy_step(*b, 1), severity::warn));
    for (auto* w : {a.get(), b.get()}) {
      settle(*w);
      const client_stats s = w->client()->stats();
      CHECK(s.detections_sent == 0);
      CHECK(s.connects == 1);  // no refusal, no reconnect loop
      CHECK(s.disconnects == 0);
      CHECK(s.last_error.empty());
      CHECK(s.acknowledged == s.sent);
    }
  }

  TEST_CASE("an observing worker counts for the swarm, is only told, and the API shows it" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    auto d = swarm_daemon(dir);
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    auto observer = join(d->port(), "shadow", "w0", observing());
    auto enforcer = join(d->port(), "shadow", "w1");
    CHECK(observer->client()->options().observe);
    CHECK_FALSE(enforcer->client()->options().observe);

    // Four of the five calls that declare the warning are the observer's: its calls count.
    for (int i = 0; i < 4; ++i) CHECK(dead_end(*observer).allowed());
    CHECK(dead_end(*enforcer).allowed());
    settle(*observer);
    settle(*enforcer);
    REQUIRE(enforcer->client()->wait_verdicts(1, 10s));
    REQUIRE(observer->client()->wait_verdicts(1, 10s));
    const verdict told = healthy_step(*enforcer, 1);
    CHECK(told.action == action::nudge);
    CHECK(has_global(told, severity::warn));
    const verdict observed = healthy_step(*observer, 1);
    CHECK(observed.action == action::allow);
    CHECK(observed.would_have == action::nudge);
    CHECK(has_global(observed, severity::warn));

    // Three more of the observer's make 8: critical. The enforcing worker's call is rejected;
    // the observer's runs, and it learns that enforce would have rejected it.
    for (int i = 0; i < 3; ++i) dead_end(*observer);
    settle(*observer);
    REQUIRE(enforcer->client()->wait_verdicts(2, 10s));
    REQUIRE(observer->client()->wait_verdicts(2, 10s));
    const verdict rejected = dead_end(*enforcer);
    CHECK(rejected.action == action::reject);
    CHECK(has_global(rejected, severity::critical));
    const verdict would_reject = dead_end(*observer);
    CHECK(would_reject.action == action::allow);
    CHECK(would_reject.would_have == action::reject);
    CHECK(has_global(would_reject, severity::critical));

    CHECK(api_worker(d->port(), "shadow", "w0").at("mode") == "observe");
    CHECK(api_worker(d->port(), "shadow", "w1").at("mode") == "enforce");
    // A worker that connects again enforcing is shown so.
    observer.reset();
    auto again = join(d->port(), "shadow", "w0");
    CHECK(api_worker(d->port(), "shadow", "w0").at("mode") == "enforce");
  }

  TEST_CASE("an observing worker against a daemon without the feature: welcomed, counted" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    auto d = swarm_daemon(dir, {"--protocol-features", "none"});
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    auto observer = join(d->port(), "v1", "w0", observing());
    auto other = join(d->port(), "v1", "w1");
    for (int i = 0; i < 4; ++i) dead_end(*observer);
    dead_end(*other);
    settle(*observer);
    settle(*other);
    REQUIRE(other->client()->wait_verdicts(1, 10s));  // the observer's calls counted
    const client_stats s = observer->client()->stats();
    CHECK(s.connects == 1);  // the hello's mode was ignored, not refused
    CHECK(s.disconnects == 0);
    CHECK(s.last_error.empty());
    CHECK(api_worker(d->port(), "v1", "w0").at("mode") == "enforce");  // it cannot know
  }
}
