// What dead ends cost (feature cost): per fingerprint the cost of its counted calls, per swarm
// what was spent and wasted, charges after the fact, the words of a verdict, and persistence.
#include <doctest/doctest.h>

#include <string>

#include "service/daemon_metrics.hpp"
#include "service/swarm_service.hpp"
#include "state/nudge_text.hpp"
#include "state/shared_economics_state.hpp"
#include "store/event_log.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using protocol::cost;

namespace {

swarm_event paid_call(std::string worker, std::uint64_t fp, double t, std::uint64_t result,
                      cost spent = {}) {
  swarm_event e;
  e.swarm = "s1";
  e.worker = std::move(worker);
  e.tool = "search";
  e.summary = "query=q";
  e.exact = fp;
  e.structural = fp + 1000;
  e.result = result;
  e.t = t;
  e.spent = spent;
  return e;
}

swarm_event charge(std::string worker, std::uint64_t fp, cost spent) {
  swarm_event e = paid_call(std::move(worker), fp, 0, 0, spent);
  e.charge = true;
  e.tool.clear();
  e.result.reset();
  return e;
}

const fingerprint_stats& stats_of(const shared_economics_state& s, std::uint64_t fp,
                                  fingerprint_kind kind = fingerprint_kind::exact) {
  static std::vector<fingerprint_row> rows;
  rows = s.top_fingerprints("s1", 1000);
  for (const auto& r : rows) {
    if (r.key == fingerprint_key{kind, fp}) return r.stats;
  }
  FAIL("no such fingerprint");
  return rows.front().stats;
}

swarm_rules usd() {
  swarm_rules r;
  r.budget.base.unit = "USD";
  return r;
}

}  // namespace

TEST_SUITE("wasted cost") {
  TEST_CASE("only counted calls are wasted, every call is spent") {
    shared_economics_state s(usd());
    s.apply(paid_call("w0", 1, 0, 7, {100, 0.5}));   // first call: counts
    s.apply(paid_call("w1", 1, 1, 8, {200, 1.0}));   // a new result: progress, not wasted
    s.apply(paid_call("w0", 1, 2, 7, {400, 2.0}));   // a result seen before: counts
    s.apply(paid_call("w1", 2, 3, 9, {1000, 4.0}));  // another fingerprint's first call
    CHECK(stats_of(s, 1).wasted == cost{500, 2.5});
    CHECK(stats_of(s, 1001, fingerprint_kind::structural).wasted == cost{500, 2.5});
    CHECK(stats_of(s, 2).wasted == cost{1000, 4.0});
    const auto sum = s.summary("s1");
    REQUIRE(sum);
    CHECK(sum->spent == cost{1700, 7.5});
    CHECK(sum->wasted.empty());  // no dead end declared: nothing burned on one
    CHECK(sum->unit == "USD");
  }

  TEST_CASE("the swarm's wasted total: a dead end's cost from its declaration on, once") {
    shared_economics_state s;
    // Nine counted calls of 1 (below the threshold of 10) and progress that costs too.
    for (int i = 0; i < 9; ++i) s.apply(paid_call(test::worker_name(i % 2), 1, i, 7, {10, 1}));
    s.apply(paid_call("w0", 2, 9, 7, {1000, 100}));
    CHECK(s.summary("s1")->wasted.empty());
    s.apply(paid_call("w1", 1, 10, 7, {10, 1}));  // the 10th: declared, all ten calls booked
    CHECK(s.summary("s1")->wasted == cost{100, 10});
    s.apply(paid_call("w1", 1, 11, 7, {10, 1}));  // while declared: booked as it comes
    s.apply(charge("w1", 1, {5, 0.5}));
    CHECK(s.summary("s1")->wasted == cost{115, 11.5});
    CHECK(stats_of(s, 1).wasted == cost{115, 11.5});
    CHECK(stats_of(s, 1).booked == cost{115, 11.5});
    CHECK(s.summary("s1")->spent == cost{1115, 111.5});
    // Lifted when the window moves on (30 min later): the next calls count for the fingerprint
    // but are no longer booked, until it is declared again.
    s.apply(paid_call("w0", 3, 4000, 7));
    CHECK(s.verdicts("s1").empty());
    s.apply(paid_call("w0", 1, 4001, 7, {1, 1}));
    CHECK(stats_of(s, 1).wasted == cost{116, 12.5});
    CHECK(s.summary("s1")->wasted == cost{115, 11.5});
    for (int i = 0; i < 9; ++i)
      s.apply(paid_call(test::worker_name(i % 2), 1, 4002 + i, 7, {1, 1}));
    CHECK(s.verdicts("s1").size() == 2);                // declared again (exact and structural)
    CHECK(s.summary("s1")->wasted == cost{125, 21.5});  // the rest booked, once
  }

  TEST_CASE("a charge goes to the worker's last call of the fingerprint, when it counted") {
    shared_economics_state s;
    s.apply(paid_call("w0", 1, 0, 7));
    s.apply(paid_call("w1", 1, 1, 8));  // progress
    CHECK(s.apply(charge("w0", 1, {50, 0.25})).empty());
    CHECK(stats_of(s, 1).wasted == cost{50, 0.25});
    s.apply(charge("w1", 1, {70, 1.0}));  // w1's call was progress: spent, not wasted
    CHECK(stats_of(s, 1).wasted == cost{50, 0.25});
    s.apply(charge("w9", 1, {1, 0}));  // a worker without a call: spent only
    s.apply(charge("w0", 5, {1, 0}));  // a fingerprint not held: spent only
    CHECK(s.summary("s1")->spent == cost{122, 1.25});
    CHECK(s.summary("s1")->wasted.empty());  // not a declared dead end
    CHECK(s.summary("s1")->calls == 2);      // a charge is no call
    swarm_event other = charge("w0", 1, {5, 5});
    other.swarm = "never-called";
    s.apply(other);
    CHECK_FALSE(s.summary("never-called"));  // nothing to charge: the swarm is not created
  }

  TEST_CASE("a verdict says what the dead end burned, in the swarm's unit") {
    shared_economics_state s(usd());
    std::vector<protocol::verdict> got;
    for (int i = 0; i < 10; ++i) {
      auto v = s.apply(paid_call(test::worker_name(i % 5), 1, i, 7, {21240, 0.318}));
      got.insert(got.end(), v.begin(), v.end());
    }
    REQUIRE(got.size() == 1);
    CHECK(got[0].spent.tokens == 212400);
    CHECK(got[0].spent.amount == doctest::Approx(3.18));
    CHECK(got[0].unit == "USD");
    CHECK(got[0].message.find("in the last 30 min (212k tokens, $3.18 burned on it), and it") !=
          std::string::npos);
    // The golden verdict of docs/protocol.md is this one.
    CHECK(got[0].message ==
          global_nudge(severity::warn,
                       {"search", "exact", 10, 5, 1800, false, {212400, 3.18}, "USD"}));
  }

  TEST_CASE("cost words: tokens and amounts as people read them") {
    CHECK(cost_words({}, "USD").empty());
    CHECK(cost_words({1, 0}, "") == "1 token");
    CHECK(cost_words({999, 0}, "") == "999 tokens");
    CHECK(cost_words({1500, 0}, "") == "1.5k tokens");
    CHECK(cost_words({212400, 0}, "") == "212k tokens");
    CHECK(cost_words({2500000, 0}, "") == "2.5M tokens");
    CHECK(cost_words({0, 3.18}, "USD") == "$3.18");
    CHECK(cost_words({0, 3.18}, "EUR") == "3.18 EUR");
    CHECK(cost_words({0, 3.18}, "") == "3.18");
    CHECK(cost_words({0, 0.0042}, "USD") == "$0.0042");
    CHECK(cost_words({12, 1}, "credits") == "12 tokens, 1.00 credits");
  }

  TEST_CASE("without costs a verdict reads as before") {
    shared_economics_state s;
    std::vector<protocol::verdict> got;
    for (int i = 0; i < 10; ++i) {
      auto v = s.apply(paid_call(test::worker_name(i % 2), 1, i, 7));
      got.insert(got.end(), v.begin(), v.end());
    }
    REQUIRE(got.size() == 1);
    CHECK(got[0].spent.empty());
    CHECK(got[0].message.find("burned") == std::string::npos);
  }

  TEST_CASE("costs survive snapshot, log replay (format 2) and a SQLite checkpoint") {
    shared_economics_state s(usd());
    event_log_writer log;
    const auto apply = [&](const swarm_event& e) {
      s.apply(e);
      log.event(e);
    };
    for (int i = 0; i < 12; ++i)
      apply(paid_call(test::worker_name(i % 3), 1 + i % 2, i, 7, {10, 0.1}));
    apply(charge("w1", 2, {1000, 1.5}));
    const std::uint64_t want = s.digest();

    shared_economics_state from_log(usd());
    REQUIRE(replay_log_record(log.take(), from_log).ok());
    CHECK(from_log.digest() == want);
    CHECK(from_log.summary("s1")->wasted == s.summary("s1")->wasted);

    shared_economics_state restored(usd());
    restored.restore(s.snapshot());
    CHECK(restored.digest() == want);
    CHECK(restored.summary("s1")->spent == s.summary("s1")->spent);
    CHECK(restored.summary("s1")->wasted == s.summary("s1")->wasted);
  }

  TEST_CASE("costs and charges through the service survive a log append and a compaction") {
    for (const bool compact : {false, true}) {
      CAPTURE(compact);
      swarm_service svc(usd());
      std::vector<protocol::event> batch;
      for (std::uint64_t i = 1; i <= 12; ++i) {
        batch.push_back(test::wire_event(i, 1 + i % 2, double(i)));
        batch.back().spent = {10 * i, 0.01 * double(i)};
      }
      batch.push_back(test::wire_event(13, 2, 13));
      batch.back().charge = true;
      batch.back().spent = {5000, 2.0};
      REQUIRE(svc.ingest({"s1", "w0", "inc"}, batch).error.ok());
      auto store = sqlite_checkpoint_store::open(":memory:");
      REQUIRE(store.has_value());
      REQUIRE(write_checkpoint(**store, svc.take_checkpoint(compact)).ok());
      swarm_service again(usd());
      REQUIRE(again.restore_from(**store).has_value());
      const auto digest = [](const swarm_service& x) {
        return x.read([](const shared_economics_state& st) { return st.digest(); });
      };
      CHECK(digest(again) == digest(svc));
      const auto sum =
          again.read([](const shared_economics_state& st) { return st.summary("s1"); });
      REQUIRE(sum);
      CHECK(sum->spent.tokens == 10 * 78 + 5000);
      CHECK(sum->wasted.empty());  // one worker: below min_workers, no dead end declared
    }
  }

  TEST_CASE("metrics: one series per swarm for spent and wasted tokens and cost") {
    swarm_summary a;
    a.swarm = "team \"a\"";
    a.spent = {300, 1.5};
    a.wasted = {200, 0.25};
    a.unit = "USD";
    const std::string text = daemon_metrics{}.render({}, {a});
    CHECK(text.find("# TYPE loopguard_swarm_wasted_cost_total counter\n") != std::string::npos);
    CHECK(text.find("loopguard_swarm_tokens_total{swarm=\"team \\\"a\\\"\"} 300\n") !=
          std::string::npos);
    CHECK(text.find("loopguard_swarm_wasted_tokens_total{swarm=\"team \\\"a\\\"\"} 200\n") !=
          std::string::npos);
    CHECK(text.find("loopguard_swarm_cost_total{swarm=\"team \\\"a\\\"\",unit=\"USD\"} 1.5\n") !=
          std::string::npos);
    CHECK(text.find("loopguard_swarm_wasted_cost_total{swarm=\"team \\\"a\\\"\",unit=\"USD\"} "
                    "0.25\n") != std::string::npos);
  }

  TEST_CASE("budget: the swarm's spend climbs the ladder once per level, whoever spends it") {
    swarm_rules r = usd();
    r.budget.base.amount = 10;  // warn at 8, critical at 10, terminate at 15
    shared_economics_state s(r);
    std::vector<protocol::verdict> got;
    const auto spend = [&](const std::string& worker, double amount, double t) {
      // Different calls (each its own fingerprint): no dead end, only spend.
      auto v = s.apply(paid_call(worker, 100 + std::uint64_t(t), t, 7, {0, amount}));
      got.insert(got.end(), v.begin(), v.end());
    };
    for (int i = 0; i < 7; ++i) spend(test::worker_name(i % 3), 1, i);  // 7: no worker reaches 8
    CHECK(got.empty());
    spend("w1", 1, 7);  // 8: warn, for the swarm
    REQUIRE(got.size() == 1);
    CHECK(got[0].kind == "budget");
    CHECK(got[0].level == severity::warn);
    CHECK(got[0].fingerprint == 0);
    CHECK(got[0].tool.empty());
    CHECK(got[0].workers == 3);
    CHECK(got[0].spent == cost{0, 8});
    CHECK(got[0].unit == "USD");
    CHECK(got[0].message ==
          "[Loopguard] Swarm budget: this swarm has used 80% of its budget ($8.00 of $10.00). "
          "Wrap up: finish the task or report what you have; avoid open-ended exploration and "
          "retries. The budget belongs to the swarm: workers it starts share it.");
    spend("w2", 1, 8);
    CHECK(got.size() == 1);              // warn once
    s.apply(charge("w2", 108, {0, 1}));  // a charge spends too: 10, critical
    const auto v = s.verdicts("s1");
    REQUIRE(v.size() == 1);
    CHECK(v[0].level == severity::critical);
    CHECK(
        v[0].message.starts_with("[Loopguard CRITICAL] Swarm budget spent: this swarm has used "
                                 "100% of its budget ($10.00 of $10.00)."));
    CHECK(s.summary("s1")->budget == severity::critical);
    CHECK(s.summary("s1")->budget_used == doctest::Approx(1.0));
    spend("w0", 5, 9);  // 15: terminate
    REQUIRE(got.size() == 2);
    CHECK(got[1].level == severity::terminate);
    CHECK(got[1].message.starts_with("[Loopguard TERMINATE]"));

    // A restore derives the level from the spend: nothing is pushed again, a late worker is
    // told the level reached (verdicts_as_pushed).
    shared_economics_state again(r);
    again.restore(s.snapshot());
    CHECK(again.summary("s1")->budget == severity::terminate);
    const auto pushed = again.verdicts_as_pushed("s1");
    REQUIRE(pushed.size() == 1);
    CHECK(pushed[0].kind == "budget");
    CHECK(pushed[0].level == severity::terminate);
    CHECK(again.apply(paid_call("w9", 500, 10, 7, {0, 1})).empty());
  }

  TEST_CASE("budget: tokens and amount each count, a prefix override, no cap, no verdict") {
    swarm_rules r;
    r.budget.base.tokens = 1000;
    r.budget.base.amount = 100;
    budget_cap small = r.budget.base;
    small.tokens = 100;
    r.budget.prefixes.emplace_back("s", small);
    shared_economics_state s(r);
    auto v = s.apply(paid_call("w0", 1, 0, 7, {85, 1}));  // 85% of the prefix's 100 tokens
    REQUIRE(v.size() == 1);
    CHECK(v[0].level == severity::warn);
    CHECK(v[0].message.find("85 tokens of 100 tokens, 1.00 of 100.00") != std::string::npos);

    shared_economics_state none;
    CHECK(none.apply(paid_call("w0", 1, 0, 7, {1000000000, 1e9})).empty());
    CHECK(none.summary("s1")->budget == severity::none);
  }
}
