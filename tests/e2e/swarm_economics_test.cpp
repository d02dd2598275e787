// Swarm economics end to end (docs/protocol.md, "Costs"): agents that link the SDK report what
// their calls cost; the real loopguardd sums what each dead end burned, says it in verdicts, the
// API and /metrics, and loses none of it to a SIGKILL.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <thread>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/swarm_worker.hpp"
#include "swarm_workers.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using protocol::cost;
using test::daemon_process;
using test::get_json;
using test::join;
using test::settle;

namespace {

constexpr const char* kDeadEndRules =
    R"({"swarm":{"threshold":5,"critical_at":0,"min_workers":2,"budget":{"unit":"USD"}}})";
// $3 for the swarm: warn at $1.50, critical at $3, terminate at $6.
constexpr const char* kBudgetRules =
    R"({"swarm":{"budget":{"unit":"USD","amount":3,"warn_fraction":0.5,"terminate_at":2}}})";

std::unique_ptr<daemon_process> economics_daemon(const test::temp_dir& dir,
                                                 std::vector<std::string> extra = {},
                                                 const char* rules = kDeadEndRules) {
  const std::string config = dir.file("loopguardd.json");
  std::ofstream(config) << rules;
  std::vector<std::string> args{"--config", config};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<daemon_process>(dir.file(""), dir.file("lg.db"), std::move(args));
}

// The level of the swarm's budget verdict in `v`, if it carries one.
std::optional<severity> budget_in(const verdict& v) {
  for (const auto& d : v.detections) {
    if (d.detector == detector_id::budget) return d.level;
  }
  return std::nullopt;
}

// A healthy call of its own (never a dead end) that cost `amount`; its verdict.
verdict work(swarm_worker& w, int n, double amount) {
  const verdict v = w.on_tool_call("read_file", nlohmann::json{{"path", "f" + std::to_string(n)}});
  if (v.action == action::reject || v.action == action::terminate) return v;
  w.on_tool_result("read_file", true, "contents " + std::to_string(n), {}, cost{0, amount});
  return v;
}

// The worker's text turns until one carries the swarm's budget at `level` (or `timeout` passes);
// the last turn's verdict. Counting verdict messages cannot say when a pushed verdict arrived
// around a reconnect: the welcome re-sends the swarm's active verdicts, before or after it.
verdict text_turn_at(swarm_worker& w, severity level, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int turn = 0;; ++turn) {
    const std::uint64_t seen = w.client()->stats().verdicts;
    verdict v = w.on_text("Let me try once more, attempt " + std::to_string(turn) + ".");
    if (budget_in(v) == level || std::chrono::steady_clock::now() >= deadline) return v;
    w.client()->wait_verdicts(seen + 1, std::chrono::milliseconds(200));
  }
}

// What the test itself reported, to compare with what the daemon summed.
struct ledger {
  cost spent, dead_end;
  std::vector<std::vector<std::string>> global_messages{3};  // per worker
  void note(int worker, const verdict& v) {
    for (const auto& d : v.detections) {
      if (d.detector == detector_id::global)
        global_messages[std::size_t(worker)].push_back(d.message);
    }
  }
};

// One worker's step: the shared dead end (same call, same failure) with its cost and a late
// charge, then a healthy call with its cost. Amounts are multiples of 1/8: their sums are exact
// in any order.
void step(swarm_worker& w, int worker, int round, ledger& l) {
  const cost call_cost{1000u * unsigned(worker + 1) + unsigned(round), 0.125 * (worker + 1)};
  const cost late{7, 0.5};
  const cost healthy{300, 0.25};
  const verdict v = w.on_tool_call("search", nlohmann::json{{"query", "flaky auth token"}});
  REQUIRE(v.action != action::reject);
  l.note(worker, v);
  l.note(worker, w.on_tool_result("search", false, "401 Unauthorized", {}, call_cost));
  l.note(worker, w.add_cost(late));  // the call was sent with its result: a charge to it
  l.note(worker,
         w.on_tool_call("read_file",
                        nlohmann::json{{"path", "src/" + std::to_string(worker * 100 + round)}}));
  l.note(worker, w.on_tool_result("read_file", true, "contents", {}, healthy));
  for (const cost& c : {call_cost, late}) l.dead_end += c;
  for (const cost& c : {call_cost, late, healthy}) l.spent += c;
}

}  // namespace

TEST_SUITE("swarm economics") {
  TEST_CASE("a dead end's cost is summed exactly across workers and across a SIGKILL" *
            doctest::timeout(90)) {
    test::temp_dir dir;
    auto d = economics_daemon(dir);
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    const unsigned short port = d->port();
    std::vector<std::unique_ptr<swarm_worker>> swarm;
    for (int i = 0; i < 3; ++i) swarm.push_back(join(port, "auth", test::worker_name(i)));
    ledger l;
    // Two rounds: six calls of the dead end by three workers declare it (threshold 5).
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 3; ++i) step(*swarm[i], i, round, l);
    }
    for (auto& w : swarm) settle(*w);
    REQUIRE(swarm[0]->client()->wait_verdicts(1, 10s));

    // A third round sent to a stopped daemon, which is then killed: in flight for certain.
    d->signal(SIGSTOP);
    for (int i = 0; i < 3; ++i) step(*swarm[i], i, 2, l);
    std::this_thread::sleep_for(50ms);
    std::uint64_t in_flight = 0;
    for (auto& w : swarm)
      in_flight += w->client()->stats().sent - w->client()->stats().acknowledged;
    CHECK(in_flight > 0);
    d->signal(SIGKILL);
    CHECK(d->wait(5s) == 128 + SIGKILL);
    d = economics_daemon(dir, {"--listen", "127.0.0.1:" + std::to_string(port)});
    REQUIRE_MESSAGE(d->port() == port, d->log());
    for (auto& w : swarm) settle(*w);

    const auto detail = get_json(port, "/api/swarms/auth");
    CHECK(detail.at("unit") == "USD");
    CHECK(detail.at("spent").at("tokens") == l.spent.tokens);
    CHECK(detail.at("spent").at("amount").get<double>() == l.spent.amount);
    // Only the declared dead end burns the swarm's money; healthy reads are spent, not wasted.
    CHECK(detail.at("wasted").at("tokens") == l.dead_end.tokens);
    CHECK(detail.at("wasted").at("amount").get<double>() == l.dead_end.amount);
    const auto& top = detail.at("top").at(0);
    CHECK(top.at("tool") == "search");
    CHECK(top.at("wasted").at("tokens") == l.dead_end.tokens);
    CHECK(top.at("wasted").at("amount").get<double>() == l.dead_end.amount);
    CHECK(detail.at("verdicts").at(0).at("cost").at("tokens") == l.dead_end.tokens);

    std::string metrics;
    REQUIRE(test::http_get(port, "/metrics", metrics) == 200);
    char want[128];
    std::snprintf(want, sizeof want,
                  "loopguard_swarm_wasted_cost_total{swarm=\"auth\",unit=\"USD\"} %.17g\n",
                  l.dead_end.amount);
    CHECK_MESSAGE(metrics.find(want) != std::string::npos, metrics);
    CHECK(metrics.find("loopguard_swarm_tokens_total{swarm=\"auth\"} " +
                       std::to_string(l.spent.tokens) + "\n") != std::string::npos);

    // Every worker was told what the dead end had burned when it was declared.
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      bool told = false;
      for (const auto& m : l.global_messages[std::size_t(i)]) {
        told |= m.find(" burned on it)") != std::string::npos &&
                m.find(" tokens, $") != std::string::npos;
      }
      CHECK(told);
    }
  }

  TEST_CASE("against a daemon without the feature cost: costs left out, charges declared gaps" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    auto d = economics_daemon(
        dir, {"--protocol-features", "detections,active_verdicts,error_seq,swarm_url,observe"});
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    std::vector<std::unique_ptr<swarm_worker>> swarm;
    for (int i = 0; i < 3; ++i) swarm.push_back(join(d->port(), "auth", test::worker_name(i)));
    ledger l;
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 3; ++i) step(*swarm[i], i, round, l);
    }
    for (auto& w : swarm) {
      settle(*w);
      const auto st = w->client()->stats();
      CHECK(st.charges_dropped == 2);  // one per step
      CHECK(st.gaps_sent == 2);
      CHECK(st.connects == 1);  // no reconnect loop
      CHECK(st.refused_dropped == 0);
    }
    const auto detail = get_json(d->port(), "/api/swarms/auth");
    CHECK(detail.at("calls") == 12);  // six dead-end calls, six reads: no charge counted as one
    CHECK(detail.at("spent").at("tokens") == 0);
    REQUIRE(detail.at("verdicts").size() >= 1);
    CHECK(detail.at("verdicts").at(0).at("message").get<std::string>().find("burned") ==
          std::string::npos);

    // A raw client that sends a charge anyway is refused, naming the event.
    test::ws_client raw(d->port(), "/ws?swarm=auth");
    REQUIRE(raw.hello("auth", "raw", "inc"));
    raw.send(nlohmann::json{{"type", "events"},
                            {"events",
                             {{{"seq", 1},
                               {"tool", "search"},
                               {"exact", "0000000000000001"},
                               {"structural", "0000000000000002"},
                               {"t", 1},
                               {"charge", true},
                               {"cost", {{"tokens", 5}}}}}}});
    const auto error = raw.next_of("error", 10s);
    REQUIRE(error.has_value());
    CHECK(error->at("code") == "bad_message");
    CHECK(error->at("message") ==
          "events[0]: a worker may not send a charge event (feature cost is off)");
    CHECK(error->at("seq") == 1);
  }

  TEST_CASE("the swarm budget: reached together, inherited by a late worker, kept by a restart" *
            doctest::timeout(90)) {
    test::temp_dir dir;
    auto d = economics_daemon(dir, {}, kBudgetRules);
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    const unsigned short port = d->port();
    std::vector<std::unique_ptr<swarm_worker>> swarm;
    for (int i = 0; i < 3; ++i) swarm.push_back(join(port, "nightly", test::worker_name(i)));
    // Each worker spends $0.625 a step: $1.875 after one step each (warn at $1.50), while no
    // worker alone has spent more than $0.625.
    for (int i = 0; i < 3; ++i) CHECK(work(*swarm[i], i, 0.625).allowed());
    for (auto& w : swarm) settle(*w);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(swarm[i]->client()->wait_verdicts(1, 10s));
      const verdict v = work(*swarm[i], 10 + i, 0.625);  // $3.75 after all three: critical
      CHECK(budget_in(v) == severity::warn);
      CHECK(v.action == action::nudge);
    }
    for (auto& w : swarm) settle(*w);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(swarm[i]->client()->wait_verdicts(2, 10s));
      const verdict v = work(*swarm[i], 20 + i, 0.625);
      CHECK(v.action == action::reject);
      CHECK(budget_in(v) == severity::critical);
    }
    // A worker that joins later (a sub-agent a worker spawned) opens no fresh allowance.
    auto late = join(port, "nightly", "w0-child");
    REQUIRE(late->client()->wait_verdicts(1, 10s));
    const verdict child = work(*late, 30, 0.625);
    CHECK(child.action == action::reject);
    CHECK(budget_in(child) == severity::critical);
    CHECK(get_json(port, "/api/swarms/nightly").at("budget").at("level") == "critical");

    // After a SIGKILL and a restart, the swarm's spend and so its level are where they were.
    for (auto& w : swarm) settle(*w);
    d->signal(SIGKILL);
    CHECK(d->wait(5s) == 128 + SIGKILL);
    d = economics_daemon(dir, {"--listen", "127.0.0.1:" + std::to_string(port)}, kBudgetRules);
    REQUIRE_MESSAGE(d->port() == port, d->log());
    const auto detail = get_json(port, "/api/swarms/nightly");
    CHECK(detail.at("spent").at("amount").get<double>() == 3.75);
    CHECK(detail.at("budget").at("level") == "critical");
    CHECK(detail.at("budget").at("used").get<double>() == 1.25);
    auto after = join(port, "nightly", "w9");
    REQUIRE(after->client()->wait_verdicts(1, 10s));
    CHECK(work(*after, 40, 0.625).action == action::reject);
    // Spend reported after the fact still counts: $6 terminates every worker.
    swarm[0]->add_cost(cost{0, 2.25});
    settle(*swarm[0]);
    for (auto* w : {swarm[1].get(), after.get()}) {
      const verdict v = text_turn_at(*w, severity::terminate, 10s);
      CHECK(v.action == action::terminate);
      CHECK(budget_in(v) == severity::terminate);
    }
    // Another swarm is not concerned.
    auto other = join(port, "daytime", "w0");
    CHECK(work(*other, 50, 0.625).allowed());
  }

  TEST_CASE("a hand-off loop is told to the two workers in it, a healthy pipeline is not" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    auto d = economics_daemon(dir, {}, R"({"swarm":{}})");  // the default rules
    REQUIRE_MESSAGE(d->port() != 0, d->log());
    auto planner = join(d->port(), "ship", "planner");
    auto coder = join(d->port(), "ship", "coder");
    auto intake = join(d->port(), "ship", "intake");
    auto tester = join(d->port(), "ship", "tester");
    const auto hand = [](swarm_worker& w, const std::string& task, const std::string& peer) {
      const verdict v = w.on_tool_call("delegate", nlohmann::json{{"task", task}}, {}, peer);
      w.on_tool_result("delegate", true, "handed to " + peer, {}, cost{500, 0});
      settle(w);
      return v;
    };
    // Three rounds of the same task between planner and coder, while intake hands new work
    // to tester after each of their hand-offs (a pipeline: different work every time).
    for (int round = 0; round < 3; ++round) {
      hand(*planner, "fix the login redirect bug", "coder");
      hand(*intake, "triage ticket " + std::to_string(round), "tester");
      hand(*coder, "fix the login redirect bug", "planner");
      hand(*intake, "triage ticket " + std::to_string(10 + round), "tester");
    }
    for (auto* w : {planner.get(), coder.get()}) {
      REQUIRE(w->client()->wait_verdicts(1, 10s));
      const verdict v = w->on_text("Passing it on.");
      bool told = false;
      for (const auto& det : v.detections) {
        told |= det.detector == detector_id::handoff && det.level == severity::warn &&
                det.message.find("went around") != std::string::npos &&
                det.message.find(" 3 times (6 hand-offs via `delegate`)") != std::string::npos;
      }
      CHECK_MESSAGE(told, w->client()->options().worker);
    }
    std::this_thread::sleep_for(200ms);  // a verdict for them would have arrived by now
    CHECK(intake->client()->stats().verdicts == 0);
    CHECK(tester->client()->stats().verdicts == 0);
    const auto verdicts = get_json(d->port(), "/api/swarms/ship").at("verdicts");
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts.at(0).at("kind") == "handoff");
    CHECK(verdicts.at(0).at("cost").at("tokens") == 3000);

    // A worker of the cycle that hands something else on has moved on: the loop is lifted, for
    // the two of them.
    hand(*planner, "write the release notes", "intake");
    REQUIRE(coder->client()->wait_verdicts(2, 10s));
    CHECK(get_json(d->port(), "/api/swarms/ship").at("verdicts").empty());
  }
}
