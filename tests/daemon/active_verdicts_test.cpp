// Active verdicts (feature active_verdicts): a declared verdict stays active while its counted
// calls in the window meet its level; once the swarm clock moves on and they fall below it, the
// state returns it with level none and the fingerprint may be declared again. A restored state
// lifts exactly as the uninterrupted one.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "service/swarm_service.hpp"
#include "state/shared_economics_state.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

swarm_event verdict_call(int worker, std::uint64_t fp, double t, std::uint64_t result = 7) {
  swarm_event e;
  e.swarm = "s";
  e.worker = test::worker_name(worker);
  e.tool = "search";
  e.exact = fp;
  e.structural = fp + 1000;
  e.result = result;
  e.t = t;
  return e;
}

// n calls of `fp` by two workers at t0, t0 + 1, ...; the verdicts of the last one.
std::vector<protocol::verdict> calls(shared_economics_state& s, int n, std::uint64_t fp,
                                     double t0) {
  std::vector<protocol::verdict> last;
  for (int i = 0; i < n; ++i) last = s.apply(verdict_call(i % 2, fp, t0 + i));
  return last;
}

// Rotating dead ends among busy work, the clock moving on: declarations and lifts.
std::vector<swarm_event> workload(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<swarm_event> out;
  for (std::size_t i = 0; i < n; ++i) {
    const bool dead_end = rng() % 10 < 3;
    const std::uint64_t phase = i / 3000;
    const std::uint64_t fp = dead_end ? 1 + phase * 20 + rng() % 20 : 100000 + rng() % 2000;
    out.push_back(verdict_call(static_cast<int>(rng() % 6), fp, 0.5 * static_cast<double>(i),
                               dead_end ? 7 : rng() % 4));
  }
  return out;
}

// Every verdict a run returns, in order, as the daemon would send it (all fields).
std::vector<std::string> run_calls(shared_economics_state& s,
                                   const std::vector<swarm_event>& events, std::size_t from,
                                   std::size_t to) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < to; ++i) {
    for (const auto& v : s.apply(events[i])) {
      out.push_back(std::to_string(i) + " " + protocol::serialize(v));
    }
  }
  return out;
}

std::size_t count_lifted(const std::vector<std::string>& verdicts) {
  std::size_t n = 0;
  for (const auto& v : verdicts) n += v.find("\"level\":\"none\"") != std::string::npos;
  return n;
}

}  // namespace

TEST_SUITE("active verdicts") {
  TEST_CASE(
      "a verdict whose calls leave the window is lifted with level none, then declared "
      "again") {
    shared_economics_state s;  // window 1800 s, threshold 10
    const auto declared = calls(s, 10, 1, 0);
    REQUIRE(declared.size() == 1);
    CHECK(declared[0].level == severity::warn);
    CHECK(s.verdicts("s").size() == 2);  // exact and structural
    CHECK(s.apply(verdict_call(0, 50, 1000)).empty());
    // At 1800 the call of t = 0 leaves the window: 9 counted calls are below the threshold.
    const auto lifted = s.apply(verdict_call(0, 50, 1800));
    REQUIRE(lifted.size() == 2);
    CHECK(lifted[0].kind == "exact");
    CHECK(lifted[1].kind == "structural");
    CHECK(lifted[0].fingerprint == 1);
    CHECK(lifted[0].level == severity::none);
    CHECK(lifted[0].calls == 9);
    CHECK(lifted[0].workers == 2);
    CHECK(lifted[0].t == 1800);
    CHECK(lifted[0].message ==
          "[Loopguard] The swarm-wide dead end on `search` looks cleared: 9 repeated calls in "
          "the last 30 min, fewer than it took to declare it. It may be tried again if something "
          "has changed.");
    CHECK(s.verdicts("s").empty());
    CHECK(s.summary("s")->verdicts == 0);
    CHECK(s.counters().lifted == 2);
    CHECK(s.counters().verdicts == 1);
    // Nothing is lifted twice; one more call meets the threshold again: declared again.
    const auto again = s.apply(verdict_call(1, 1, 1800));
    REQUIRE(again.size() == 1);
    CHECK(again[0].level == severity::warn);
    CHECK(again[0].calls == 10);
    CHECK(s.verdicts("s").size() == 2);
  }

  TEST_CASE("an active verdict declared by the cap is listed with the cap's message") {
    // Results that keep changing: only the cap (50 calls) declares it; a worker told of it
    // after its welcome reads what the others were pushed.
    shared_economics_state s;
    std::vector<protocol::verdict> pushed;
    for (int i = 0; i < 50; ++i) pushed = s.apply(verdict_call(i % 2, 1, i, 1000 + i));
    REQUIRE(pushed.size() == 1);
    CHECK(pushed[0].message.find("results keep changing") != std::string::npos);
    const auto listed = s.verdicts("s");
    REQUIRE_FALSE(listed.empty());
    CHECK(listed[0].message == pushed[0].message);
    CHECK(protocol::serialize(listed[0]) == protocol::serialize(pushed[0]));
  }

  TEST_CASE("a worker told after its welcome gets what was pushed: one verdict per declaration") {
    shared_economics_state s;
    const auto pushed = calls(s, 10, 1, 0);  // exact and structural declared together
    REQUIRE(pushed.size() == 1);
    CHECK(s.verdicts("s").size() == 2);  // the API lists both forms
    auto told = s.verdicts_as_pushed("s");
    REQUIRE(told.size() == 1);
    CHECK(protocol::serialize(told[0]) == protocol::serialize(pushed[0]));
    // The exact form lifted while the structural one holds (a near-identical call keeps it at
    // its level): the structural verdict is the one to tell.
    const auto lifted = s.apply(verdict_call(0, 50, 1000));
    CHECK(lifted.empty());
    swarm_event near =
        verdict_call(1, 2, 1799);  // another exact fingerprint, the same structural one
    near.structural = 1001;
    s.apply(near);
    CHECK(s.apply(verdict_call(0, 50, 1800)).size() == 1);  // the exact verdict of fingerprint 1
    told = s.verdicts_as_pushed("s");
    REQUIRE(told.size() == 1);
    CHECK(told[0].kind == "structural");
  }

  TEST_CASE("a call of the fingerprint itself keeps it at its level: not lifted") {
    shared_economics_state s;
    calls(s, 10, 1, 0);
    // The call of t = 0 leaves as this one enters: still 10 counted calls.
    CHECK(s.apply(verdict_call(0, 1, 1800)).empty());
    CHECK(s.verdicts("s").size() == 2);
  }

  TEST_CASE("critical below critical_at is lifted, the next call may declare warn") {
    shared_economics_state s;  // critical_at 20
    const auto critical = calls(s, 20, 1, 0);
    REQUIRE(critical.size() == 1);
    CHECK(critical[0].level == severity::critical);
    // At 1802.5 the calls of t = 0, 1, 2 have left: 17 counted calls.
    const auto lifted = s.apply(verdict_call(0, 50, 1802.5));
    REQUIRE(lifted.size() == 2);
    CHECK(lifted[0].level == severity::none);
    CHECK(lifted[0].calls == 17);
    const auto warn = s.apply(verdict_call(1, 1, 1803));
    REQUIRE(warn.size() == 1);
    CHECK(warn[0].level == severity::warn);
    CHECK(warn[0].calls == 17);  // t = 3 left as this call entered
  }

  TEST_CASE("swarm_complete lifts everything at once") {
    shared_economics_state s;
    calls(s, 10, 1, 0);
    CHECK(s.complete("s"));
    CHECK(s.verdicts("s").empty());
    CHECK(s.apply(verdict_call(0, 50, 5000)).empty());  // nothing left to lift
    CHECK(calls(s, 10, 1, 5001).size() == 1);           // declared afresh
  }

  TEST_CASE("an evicted active verdict is lifted") {
    swarm_rules rules;
    rules.max_fingerprints_per_swarm = 16;
    shared_economics_state s(rules);
    calls(s, 10, 1, 0);
    std::size_t lifted = 0;
    for (std::uint64_t fp = 100; fp < 120 && lifted == 0; ++fp) {
      for (const auto& v : s.apply(verdict_call(0, fp, 20))) lifted += v.level == severity::none;
    }
    CHECK(lifted == 2);
    CHECK(s.verdicts("s").empty());
  }

  TEST_CASE("without lift_verdicts a declared level stays (protocol v1)") {
    shared_economics_state s({}, {.lift_verdicts = false});
    calls(s, 10, 1, 0);
    CHECK(s.apply(verdict_call(0, 50, 5000)).empty());
    CHECK(s.verdicts("s").size() == 2);
    CHECK(calls(s, 10, 1, 5001).empty());  // never declared again
    CHECK(s.counters().lifted == 0);
  }

  TEST_CASE("a state restored mid-way lifts exactly as the uninterrupted one") {
    const auto events = workload(20000, 7);
    shared_economics_state whole;
    const auto expected = run_calls(whole, events, 0, events.size());
    REQUIRE(count_lifted(expected) > 10);
    for (const std::size_t cut : {1000u, 5003u, 9000u, 14567u}) {
      CAPTURE(cut);
      shared_economics_state first;
      auto got = run_calls(first, events, 0, cut);
      shared_economics_state restored;
      restored.restore(first.snapshot());
      const auto rest = run_calls(restored, events, cut, events.size());
      got.insert(got.end(), rest.begin(), rest.end());
      CHECK(got == expected);
      CHECK(restored.digest() == whole.digest());
    }
  }

  TEST_CASE("a service restored from its store (rows and log) lifts as the uninterrupted one") {
    const auto events = workload(12000, 11);
    // Event i is the (i / 6 + 1)-th of worker i % 6.
    const auto feed = [&](swarm_service& svc, std::size_t from, std::size_t to) {
      std::vector<std::string> out;
      for (std::size_t i = from; i < to; ++i) {
        const auto e = test::wire_event(i / 6 + 1, events[i].exact, events[i].t, events[i].result);
        const worker_identity id{"s", test::worker_name(static_cast<long>(i % 6)), "i"};
        for (const auto& v : svc.ingest(id, {e}).verdicts) out.push_back(protocol::serialize(v));
      }
      return out;
    };
    swarm_service whole;
    const auto expected = feed(whole, 0, events.size());
    REQUIRE(count_lifted(expected) > 0);
    swarm_service first;
    auto got = feed(first, 0, 4000);
    auto store = sqlite_checkpoint_store::open(":memory:");
    REQUIRE(store.has_value());
    REQUIRE(write_checkpoint(**store, first.take_checkpoint(true)).ok());  // rows
    auto more = feed(first, 4000, 7000);
    got.insert(got.end(), more.begin(), more.end());
    REQUIRE(write_checkpoint(**store, first.take_checkpoint()).ok());  // a log record
    swarm_service restored;
    REQUIRE(restored.restore_from(**store).has_value());
    more = feed(restored, 7000, events.size());
    got.insert(got.end(), more.begin(), more.end());
    CHECK(got == expected);
  }
}
