#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "state/shared_economics_state.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

// A call of `tool` whose exact and structural fingerprints derive from `fp`.
swarm_event call(std::string worker, std::uint64_t fp, double t,
                 std::optional<std::uint64_t> result = 7, std::string swarm = "s1") {
  swarm_event e;
  e.swarm = std::move(swarm);
  e.worker = std::move(worker);
  e.tool = "search";
  e.summary = "query=config loader";
  e.exact = fp;
  e.structural = fp + 1000;
  e.result = result;
  e.t = t;
  return e;
}

// Applies n calls alternating between `workers` workers; returns every verdict.
std::vector<protocol::verdict> run(shared_economics_state& s, int n, int workers,
                                   std::uint64_t fp = 1, double t0 = 0, std::string swarm = "s1") {
  std::vector<protocol::verdict> out;
  for (int i = 0; i < n; ++i) {
    auto v = s.apply(call(test::worker_name(i % workers), fp, t0 + i, 7, swarm));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace

TEST_SUITE("shared_economics_state") {
  TEST_CASE("the threshold-th call from two workers declares warn, once") {
    shared_economics_state s;
    CHECK(run(s, 9, 2).empty());
    const auto v = s.apply(call("w1", 1, 9));
    REQUIRE(v.size() == 1);
    CHECK(v[0].level == severity::warn);
    CHECK(v[0].kind == "exact");
    CHECK(v[0].fingerprint == 1);
    CHECK(v[0].calls == 10);
    CHECK(v[0].workers == 2);
    CHECK(v[0].tool == "search");
    CHECK(v[0].t == 9);
    CHECK(v[0].message.find("`search`") != std::string::npos);
    CHECK(v[0].message.find("10 times") != std::string::npos);
    CHECK(v[0].message.find("2 workers") != std::string::npos);
    CHECK(s.apply(call("w0", 1, 10)).empty());  // warn is not declared again
  }

  TEST_CASE("escalation: critical once at critical_at, then nothing more") {
    shared_economics_state s;
    const auto v = run(s, 40, 3);
    REQUIRE(v.size() == 2);
    CHECK(v[0].level == severity::warn);
    CHECK(v[0].calls == 10);
    CHECK(v[1].level == severity::critical);
    CHECK(v[1].calls == 20);
    CHECK(v[1].message.find("CRITICAL") != std::string::npos);
  }

  TEST_CASE("one worker alone is a local loop, not a global one") {
    shared_economics_state s;
    CHECK(run(s, 60, 1).empty());
    SUBCASE("a second worker joining tips it over") {
      const auto v = s.apply(call("other", 1, 61));
      REQUIRE(v.size() == 1);
      CHECK(v[0].level == severity::critical);  // 61 counted calls, 2 workers
      CHECK(v[0].workers == 2);
    }
  }

  TEST_CASE("min_workers = 1 makes a single worker enough") {
    swarm_rules r;
    r.min_workers = 1;
    shared_economics_state s(r);
    const auto v = run(s, 10, 1);
    REQUIRE(v.size() == 1);
    CHECK(v[0].workers == 1);
  }

  TEST_CASE("regression: one event far in the future cannot switch swarm-wide detection off") {
    shared_economics_state s;  // threshold 10, min_workers 2, window 30 min
    run(s, 3, 2, 1, 0);
    // A worker claims t = 1e12: the clock moves by one window at most.
    s.apply(call("rogue", 99, 1e12));
    CHECK(s.summary("s1")->swarm == "s1");
    // The others go on at their real times and still reach the threshold within the window.
    const auto v = run(s, 12, 2, 2, 10);
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().calls == 10);
    CHECK(s.digest("s1") != 0);
  }

  TEST_CASE("the swarm clock rule depends only on the events: clamped times are reproducible") {
    shared_economics_state a, b;
    for (auto* st : {&a, &b}) {
      st->apply(call("w0", 1, 0));
      st->apply(call("w1", 1, 5e9));    // clamped to 0 + window
      st->apply(call("w0", 1, 1e300));  // clamped to 2 windows
    }
    CHECK(a.digest() == b.digest());
    const auto top = a.top_fingerprints("s1", 1);
    REQUIRE(top.size() == 1);
    CHECK(top[0].stats.last_seen == doctest::Approx(2 * 1800.0));
  }

  TEST_CASE("a time that is not finite counts at the swarm's clock (decoders refuse them)") {
    shared_economics_state s;
    s.apply(call("w0", 1, std::numeric_limits<double>::quiet_NaN()));
    s.apply(call("w0", 1, 100));
    s.apply(call("w1", 1, std::numeric_limits<double>::infinity()));
    const auto top = s.top_fingerprints("s1", 1);
    REQUIRE(top.size() == 1);
    CHECK(top[0].stats.first_seen == 0);
    CHECK(top[0].stats.last_seen == 100);
    // Calls hours apart are not counted together after a NaN start.
    shared_economics_state t;
    t.apply(call("w0", 5, std::numeric_limits<double>::quiet_NaN()));
    std::vector<protocol::verdict> v;
    for (int i = 0; i < 12; ++i) {
      auto r = t.apply(call(test::worker_name(i % 2), 5, 3600.0 * (i + 1)));
      v.insert(v.end(), r.begin(), r.end());
    }
    CHECK(v.empty());
  }

  TEST_CASE("a swarm of one worker keeps its clock too") {
    shared_economics_state s(swarm_rules{.min_workers = 1});
    s.apply(call("w0", 1, 0));
    s.apply(call("w0", 1, 1e15));
    const auto top = s.top_fingerprints("s1", 1);
    CHECK(top[0].stats.last_seen == doctest::Approx(1800.0));
  }

  TEST_CASE("calls older than the window stop counting") {
    shared_economics_state s;
    // 9 calls, then the 10th just after the first one left the window.
    for (int i = 0; i < 9; ++i) CHECK(s.apply(call(test::worker_name(i % 2), 1, i)).empty());
    CHECK(s.apply(call("w1", 1, 1800.0)).empty());  // call at t=0 expired: 9 in window
    const auto v = s.apply(call("w0", 1, 1800.5));
    REQUIRE(v.size() == 1);
    CHECK(v[0].calls == 10);
  }

  TEST_CASE("a call whose result is new is progress, repeated results count") {
    shared_economics_state s;
    SUBCASE("every result different: only the first call counts, until the cap") {
      std::vector<protocol::verdict> all;
      for (int i = 0; i < 49; ++i) {
        auto v = s.apply(call(test::worker_name(i % 3), 1, i, 100 + std::uint64_t(i)));
        all.insert(all.end(), v.begin(), v.end());
      }
      CHECK(all.empty());
      const auto v = s.apply(call("w0", 1, 49, 500));
      REQUIRE(v.size() == 1);  // the absolute cap: 50 calls in the window
      CHECK(v[0].level == severity::warn);
      CHECK(v[0].calls == 50);
      CHECK(v[0].message.find("results keep changing") != std::string::npos);
    }
    SUBCASE("a call with no result counts") {
      for (int i = 0; i < 9; ++i) {
        CHECK(s.apply(call(test::worker_name(i % 2), 1, i, std::nullopt)).empty());
      }
      CHECK(s.apply(call("w1", 1, 9, std::nullopt)).size() == 1);
    }
    SUBCASE("a status that changes then settles: only the repeats count") {
      // results 1..5 are new (4 of them progress), then the same result 10 more times.
      for (std::uint64_t r = 1; r <= 5; ++r) CHECK(s.apply(call("w0", 1, double(r), r)).empty());
      std::vector<protocol::verdict> all;
      for (int i = 0; i < 9; ++i) {
        auto v = s.apply(call(test::worker_name(i % 2), 1, 10.0 + i, 5));
        all.insert(all.end(), v.begin(), v.end());
      }
      CHECK(all.size() == 1);  // counted: first call + 9 repeats = 10
    }
  }

  TEST_CASE("progress_aware = false counts every call whatever its result") {
    swarm_rules r;
    r.progress_aware = false;
    shared_economics_state s(r);
    std::vector<protocol::verdict> all;
    for (int i = 0; i < 10; ++i) {
      auto v = s.apply(call(test::worker_name(i % 2), 1, i, std::uint64_t(i)));
      all.insert(all.end(), v.begin(), v.end());
    }
    CHECK(all.size() == 1);
  }

  TEST_CASE("structural fingerprints count on their own") {
    shared_economics_state s;
    std::vector<protocol::verdict> all;
    for (int i = 0; i < 10; ++i) {
      swarm_event e = call(test::worker_name(i % 2), 1, i);
      e.exact = 50 + std::uint64_t(i);  // every call spelled differently
      e.structural = 9;                 // but the same thing
      auto v = s.apply(e);
      all.insert(all.end(), v.begin(), v.end());
    }
    REQUIRE(all.size() == 1);
    CHECK(all[0].kind == "structural");
    CHECK(all[0].fingerprint == 9);
  }

  TEST_CASE("swarms are fully separate") {
    shared_economics_state s;
    run(s, 5, 2, 1, 0, "a");
    run(s, 5, 2, 1, 0, "b");  // 10 calls in total, but 5 per swarm
    CHECK(s.verdicts("a").empty());
    CHECK(s.verdicts("b").empty());
    const auto v = run(s, 5, 2, 1, 5, "a");
    REQUIRE(v.size() == 1);
    CHECK(v[0].swarm == "a");
    CHECK(s.verdicts("b").empty());
    CHECK(s.digest("a") != s.digest("b"));
  }

  TEST_CASE("swarm_complete forgets the swarm and only it") {
    shared_economics_state s;
    run(s, 12, 2, 1, 0, "a");
    run(s, 3, 2, 1, 0, "b");
    const auto b = s.digest("b");
    CHECK(s.complete("a"));
    CHECK_FALSE(s.complete("a"));
    CHECK(s.digest("a") == 0);
    CHECK(s.digest("b") == b);
    CHECK(s.swarms().size() == 1);
    // The swarm starts afresh: the level is declared again.
    CHECK(run(s, 10, 2, 1, 100, "a").size() == 1);
  }

  TEST_CASE("the fingerprint cap evicts the coldest and counts evictions") {
    swarm_rules r;
    r.max_fingerprints_per_swarm = 16;  // 8 calls: exact + structural each
    shared_economics_state s(r);
    for (std::uint64_t fp = 1; fp <= 8; ++fp) s.apply(call("w0", fp * 10, double(fp)));
    CHECK(s.counters().fingerprints == 16);
    CHECK(s.counters().evictions == 0);
    s.apply(call("w0", 1, 20));  // two new keys: the two coldest (fp 10 at t=1) go
    CHECK(s.counters().fingerprints == 16);
    CHECK(s.counters().evictions == 2);
    const auto top = s.top_fingerprints("s1", 100);
    for (const auto& row : top) CHECK(row.stats.first_seen != 1.0);
    const auto changes = s.take_changes();
    CHECK(changes.erased.size() == 2);
  }

  TEST_CASE("digest covers counts, workers, first and last seen and verdicts") {
    shared_economics_state s;
    run(s, 12, 3);
    const auto base = s.snapshot();
    const auto d0 = s.digest("s1");
    const auto changed = [&](auto mutate) {
      auto snap = base;
      mutate(snap);
      shared_economics_state other;
      other.restore(snap);
      return other.digest("s1");
    };
    CHECK(changed([](state_snapshot&) {}) == d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.calls++; }) != d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.counted--; }) != d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.workers.pop_back(); }) != d0);
    CHECK(changed([](state_snapshot& x) { x.workers[1].name = "zz"; }) != d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.first_seen = -1; }) != d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.last_seen += 1; }) != d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.level = severity::critical; }) !=
          d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].key.value ^= 1; }) != d0);
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.tool = "grep"; }) != d0);
    // Not covered: the declaration's own bookkeeping and the window's arrival order.
    CHECK(changed([](state_snapshot& x) { x.fingerprints[0].stats.level_calls = 99; }) == d0);
  }

  TEST_CASE("digest does not depend on the order of workers' events") {
    shared_economics_state a, b;
    for (int i = 0; i < 15; ++i) a.apply(call(test::worker_name(i % 3), 1, i));
    for (int i = 14; i >= 0; --i) b.apply(call(test::worker_name(i % 3), 1, i));
    CHECK(a.digest() == b.digest());
  }

  TEST_CASE("snapshot, restore and the change set rebuild the same state") {
    shared_economics_state s;
    run(s, 25, 3, 1);
    run(s, 4, 2, 77, 30, "other");
    s.complete("other");
    run(s, 3, 2, 5, 40, "third");

    shared_economics_state restored;
    restored.restore(s.snapshot());
    CHECK(restored.digest() == s.digest());
    // The restored state goes on exactly like the original.
    CHECK(restored.apply(call("w9", 1, 50)) == std::vector<protocol::verdict>{});
    s.apply(call("w9", 1, 50));
    CHECK(restored.digest() == s.digest());

    const auto changes = s.take_changes();
    CHECK(changes.cleared_swarms == std::vector<std::string>{"other"});
    CHECK(changes.fingerprints.size() == 4);  // s1 (exact, structural) and third (both)
    CHECK(s.take_changes().empty());
  }

  TEST_CASE("two states fed the same events agree in every output despite their tables' seeds") {
    // Each fingerprint table has its own random seed, so two states walk their fingerprints in
    // different orders: evictions, lifted verdicts, the change sets and snapshots must not show
    // it (a restore replays the log and must reach the state it left).
    swarm_rules r;
    r.max_fingerprints_per_swarm = 64;
    shared_economics_state a(r), b(r);
    std::mt19937_64 rng(3);
    const auto keys = [](const state_changes& c) {
      std::vector<std::pair<std::string, fingerprint_key>> out;
      for (const auto& f : c.fingerprints) out.emplace_back(f.swarm, f.key);
      for (const auto& e : c.erased) out.emplace_back("erased " + e.swarm, e.key);
      return out;
    };
    for (int i = 0; i < 3000; ++i) {
      // A few hot fingerprints called again and again (declared, then evicted while declared
      // once they cool down) among a stream of new ones that keeps the cap busy.
      const std::uint64_t fp = rng() % 3 == 0 ? 1 + (i / 500) * 10 + rng() % 4 : 100000 + rng();
      const auto e = call(test::worker_name(static_cast<int>(rng() % 3)), fp, i);
      REQUIRE(a.apply(e) == b.apply(e));
      if (i % 97 == 0) REQUIRE(keys(a.take_changes()) == keys(b.take_changes()));
    }
    CHECK(a.counters().evictions > 100);
    CHECK(a.counters().lifted > 0);
    CHECK(a.counters().evictions == b.counters().evictions);
    CHECK(keys(a.take_changes()) == keys(b.take_changes()));
    CHECK(a.digest() == b.digest());
    const auto sa = a.snapshot(), sb = b.snapshot();
    REQUIRE(sa.fingerprints.size() == sb.fingerprints.size());
    for (std::size_t i = 0; i < sa.fingerprints.size(); ++i) {
      CHECK(sa.fingerprints[i].key == sb.fingerprints[i].key);
    }
  }

  TEST_CASE("merge_newer: a later clear drops earlier rows, later rows win") {
    shared_economics_state s;
    run(s, 3, 2, 1, 0, "a");
    auto older = s.take_changes();
    s.complete("a");
    run(s, 2, 2, 1, 10, "a");
    older.merge_newer(s.take_changes());
    CHECK(older.cleared_swarms == std::vector<std::string>{"a"});
    REQUIRE(older.fingerprints.size() == 2);
    CHECK(older.fingerprints[0].stats.calls == 2);
  }
}

// Needed for CHECK on vectors of verdicts.
namespace loopguard::protocol {
bool operator==(const verdict& a, const verdict& b) {
  return a.swarm == b.swarm && a.fingerprint == b.fingerprint && a.level == b.level;
}
}  // namespace loopguard::protocol
