// Retention (docs/operations.md, "Retention"): the pure idle tracker driven by a fake wall
// clock, the swarm service's sweep (expired incarnations refused, tombstones keeping spend),
// and what a restore brings back.
#include <doctest/doctest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "fault_injecting_store.hpp"
#include "service/group_committer.hpp"
#include "service/swarm_service.hpp"
#include "state/idle_tracker.hpp"
#include "store/event_log.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "store/sqlite_rows_store.hpp"
#include "store_util.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::open_ok;
using loopguard::test::wire_event;

namespace {

constexpr double kDay = 86400;

retention_limits limits(double incarnation, double swarm, double kept = 0) {
  return {incarnation, swarm, kept};
}

// A service on a wall clock the test moves.
struct clocked_service {
  explicit clocked_service(swarm_rules rules = {})
      : svc(std::move(rules), {}, [this] { return now; }) {}
  double now = 1'000'000;
  swarm_service svc;
};

std::vector<protocol::event> events_from(std::uint64_t first, int n, double t,
                                         std::uint64_t tokens = 0) {
  std::vector<protocol::event> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(wire_event(first + std::uint64_t(i), 1 + std::uint64_t(i % 3), t + i));
    out.back().spent = {tokens, 0};
  }
  return out;
}

std::optional<swarm_summary> summary(const swarm_service& svc, const std::string& swarm) {
  return svc.read([&](const shared_economics_state& s) { return s.summary(swarm); });
}

// The kept databases' workload: workers w0..w2 of incarnation `inc` each send `n` events of
// `swarm` from sequence number `first`, over fingerprints 1..4, at t0, t0 + 1, ...
void feed_three(clocked_service& c, const std::string& swarm, int n, std::uint64_t first,
                double t0) {
  for (int w = 0; w < 3; ++w) {
    std::vector<protocol::event> batch;
    for (int i = 0; i < n; ++i) {
      batch.push_back(wire_event(first + std::uint64_t(i), std::uint64_t(1 + i % 4), t0 + i));
    }
    REQUIRE(c.svc.ingest({swarm, test::worker_name(w), "inc"}, batch).error.ok());
  }
}

// A checkpoint (a compaction, or a log append) written to `store`, or only taken without one.
void commit_to(clocked_service& c, checkpoint_store* store, bool compact) {
  const auto cp = c.svc.take_checkpoint(compact);
  if (store != nullptr) REQUIRE(write_checkpoint(*store, cp).ok());
}

// The first round of both: s1 and s2 fed, then one event of s2/w0 (seq 6, fingerprint 1, t 5)
// costing 1000 tokens and 0.25.
void first_round(clocked_service& c) {
  feed_three(c, "s1", 30, 1, 0);
  feed_three(c, "s2", 5, 1, 0);
  std::vector<protocol::event> paid{wire_event(6, 1, 5)};
  paid[0].spent = {1000, 0.25};
  REQUIRE(c.svc.ingest({"s2", "w0", "inc"}, paid).error.ok());
}

// The sequence that wrote tests/daemon/data/schema4.db (its README): with `store`, the
// checkpoints it wrote; without, the same operations on a fresh service.
void schema4_sequence(clocked_service& c, checkpoint_store* store) {
  const auto feed = [&](const std::string& swarm, int n, std::uint64_t first, double t0) {
    feed_three(c, swarm, n, first, t0);
  };
  const auto commit = [&](bool compact) { commit_to(c, store, compact); };
  first_round(c);
  REQUIRE(c.svc.ingest({"old", "w0", "a"}, events_from(1, 4, 0, 50)).error.ok());
  commit(true);
  c.now += 100;
  feed("s2", 7, 6, 10);  // w0 sent 6 already (the paid event): a duplicate there
  feed("s3", 12, 1, 100);
  commit(false);
  c.now += 50;  // s1 and old idle 150 s: expired; s2 and s3 50 s
  const auto r = c.svc.sweep(limits(120, 120));
  REQUIRE(r.swarms == 2);
  REQUIRE(r.incarnations == 4);
  feed("s3", 4, 13, 200);
  commit(false);
}

// The sequence that wrote tests/daemon/data/schema5.db (its README): a compaction in chunks left
// after its flip, its staged rows not yet folded, and a log record after its boundary. With
// `store`, the checkpoints it wrote; without, the same operations on a fresh service.
void schema5_sequence(clocked_service& c, checkpoint_store* store) {
  const auto feed = [&](const std::string& swarm, int n, std::uint64_t first, double t0) {
    feed_three(c, swarm, n, first, t0);
  };
  const auto commit = [&](bool compact) { commit_to(c, store, compact); };
  first_round(c);
  commit(true);
  feed("s2", 7, 6, 10);
  feed("s3", 12, 1, 100);
  commit(false);
  if (store != nullptr) {
    // Two rows per part and per step: it takes, stages and flips over several commits.
    group_committer gc(c.svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .job_rows = 2});
    bool flipped = false;
    for (int i = 0; i < 100 && !flipped; ++i) {
      const auto o = gc.commit_once(false);
      REQUIRE_MESSAGE(o.result.ok(), o.result.message());
      flipped = o.compacted;
    }
    REQUIRE(flipped);
  }
  feed("s3", 4, 13, 200);
  commit(false);
}

// A copy of tests/daemon/data/schemaN.db in `dir` (a kept database: never written in place),
// with its rows file from schema 7 on, checked to be of that version.
std::string kept_copy(test::temp_dir& dir, int version) {
  const std::string name = "schema" + std::to_string(version) + ".db";
  const std::string path = dir.file(name);
  const std::string kept = std::string(LOOPGUARD_DAEMON_TEST_DIR) + "/data/" + name;
  std::filesystem::copy_file(kept, path);
  if (version >= 7) std::filesystem::copy_file(kept + "-rows", path + "-rows");
  SQLite::Database db(path);
  REQUIRE(db.execAndGet("PRAGMA user_version").getInt() == version);
  return path;
}

// A compaction in chunks (2 rows a part and a step) carried to its end on `store`, checking
// after every commit that a restore gives `digest`.
void compact_restoring(clocked_service& c, checkpoint_store& store, std::uint64_t digest) {
  group_committer gc(c.svc, store, {.compact_log_bytes = 1, .take_rows = 2, .job_rows = 2});
  bool flipped = false;
  for (int i = 0; i < 200 && !(flipped && !gc.compacting()); ++i) {
    const auto o = gc.commit_once(false);
    REQUIRE_MESSAGE(o.result.ok(), o.result.message());
    flipped = flipped || o.compacted;
    clocked_service again;
    again.now = c.now;
    REQUIRE(again.svc.restore_from(store).has_value());
    CHECK(again.svc.read([](const shared_economics_state& x) { return x.digest(); }) == digest);
  }
  CHECK(flipped);
  CHECK_FALSE(gc.compacting());
}

// A kept database written by schema5_sequence that stops after a flip (schemas 6 and 7,
// tests/daemon/data/README.md), migrated from `from`: it restores to the digest and sequence
// numbers of the same operations applied afresh (one record replayed: id 1 is covered by the
// rows), then the fold, the trim of the covered record and a new compaction commit step by step,
// each commit restoring the same digest. The digest.
std::uint64_t restore_kept_flip(const std::string& path, int from) {
  clocked_service want;  // the sequence that wrote it
  schema5_sequence(want, nullptr);
  const std::uint64_t digest =
      want.svc.read([](const shared_economics_state& x) { return x.digest(); });
  auto store = open_ok(path);
  CHECK(store->migrated_from() == from);
  clocked_service got;
  const auto r = got.svc.restore_from(*store);
  REQUIRE(r.has_value());
  CHECK(r->records == 1);
  CHECK(got.svc.read([](const shared_economics_state& x) { return x.digest(); }) == digest);
  CHECK(got.svc.sequences() == want.svc.sequences());
  compact_restoring(got, *store, digest);
  return digest;
}

}  // namespace

TEST_SUITE("retention") {
  TEST_CASE("idle_tracker: an incarnation expires after its idle time, never while connected") {
    idle_tracker t;
    const worker_identity a{"s", "w0", "a"}, b{"s", "w1", "b"};
    REQUIRE(t.attach(a, 0));
    REQUIRE(t.attach(b, 0));
    t.detach(b, 10);
    CHECK(t.sweep(10 + 99, limits(100, 0)).incarnations.empty());  // 99 s idle: not yet
    const auto swept = t.sweep(10 + 100, limits(100, 0));
    REQUIRE(swept.incarnations.size() == 1);
    CHECK(swept.incarnations[0] == b);
    // `a` stays connected for ever: never expired, whatever the clock says.
    CHECK(t.sweep(1e9, limits(100, 0)).incarnations.empty());
    CHECK(t.incarnations() == 1);
    t.detach(a, 1e9);
    CHECK(t.sweep(1e9 + 100, limits(100, 0)).incarnations.size() == 1);
    CHECK(t.incarnations() == 0);
  }

  TEST_CASE("idle_tracker: activity resets the idle time, a limit of 0 never expires") {
    idle_tracker t;
    const worker_identity a{"s", "w0", "a"};
    t.touch(a, 0);
    t.touch(a, 50);
    CHECK(t.sweep(120, limits(100, 100)).incarnations.empty());  // 70 s since the last touch
    CHECK(t.sweep(1e12, limits(0, 0)).incarnations.empty());     // off
    CHECK(t.sweep(1e12, limits(0, 0)).swarms.empty());
    const auto swept = t.sweep(150, limits(100, 100));
    CHECK(swept.incarnations.size() == 1);
    CHECK(swept.swarms == std::vector<std::string>{"s"});
  }

  TEST_CASE("idle_tracker: a swarm expires only when none of its incarnations is connected") {
    idle_tracker t;
    const worker_identity a{"s", "w0", "a"}, b{"s", "w1", "b"};
    REQUIRE(t.attach(a, 0));
    REQUIRE(t.attach(b, 0));
    t.detach(a, 0);
    CHECK(t.sweep(1000, limits(0, 100)).swarms.empty());  // b is still connected
    t.detach(b, 1000);
    CHECK(t.sweep(1099, limits(0, 100)).swarms.empty());
    CHECK(t.sweep(1100, limits(0, 100)).swarms == std::vector<std::string>{"s"});
    CHECK(t.swarms() == 0);
  }

  TEST_CASE("idle_tracker: expired incarnations are refused, then forgotten after expired_kept") {
    idle_tracker t;
    const worker_identity a{"s", "w0", "a"};
    t.record_expired(a, 100);
    CHECK(t.is_expired(a));
    CHECK_FALSE(t.attach(a, 150));
    CHECK(t.incarnations() == 0);  // a refused hello tracks nothing
    CHECK(t.sweep(100 + 999, limits(0, 0, 1000)).forgotten == 0);
    CHECK(t.sweep(100 + 1000, limits(0, 0, 1000)).forgotten == 1);
    CHECK_FALSE(t.is_expired(a));
    CHECK(t.attach(a, 1200));
  }

  TEST_CASE("idle_tracker: changes name what to write, at most once a minute while active") {
    idle_tracker t;
    const worker_identity a{"s", "w0", "a"};
    t.touch(a, 0);
    auto c = t.take_changes();
    REQUIRE(c.seen.size() == 1);
    CHECK(c.seen[0].seen == 0);
    REQUIRE(c.swarms_seen.size() == 1);
    t.touch(a, idle_tracker::kSeenResolution - 1);
    CHECK(t.take_changes().empty());  // too soon to write again
    t.touch(a, idle_tracker::kSeenResolution);
    CHECK(t.take_changes().seen.size() == 1);
    REQUIRE(t.attach(a, 61));
    t.detach(a, 62);  // a disconnect is always written
    c = t.take_changes();
    REQUIRE(c.seen.size() == 1);
    CHECK(c.seen[0].seen == 62);
    t.sweep(62 + 10, limits(10, 10));
    t.record_expired(a, 72);
    c = t.take_changes();
    CHECK(c.dropped == std::vector<worker_identity>{a});
    REQUIRE(c.expired.size() == 1);
    CHECK(c.expired[0].expired == 72);
    CHECK(c.swarms_dropped == std::vector<std::string>{"s"});
    CHECK(c.seen.empty());
  }

  TEST_CASE("idle_tracker: a restore counts unknown times (0, a migrated file) from now") {
    idle_tracker t;
    const worker_identity a{"s", "w0", "a"}, b{"s", "w1", "b"};
    t.restore({{a, 0}, {b, 500}}, {{"s", 400}, {"gone", 1}}, {"s", "t"}, {{{"s", "w2", "x"}, 7}},
              1000);
    CHECK(t.seen(a) == 1000);
    CHECK(t.seen(b) == 500);
    CHECK(t.is_expired({"s", "w2", "x"}));
    // "gone" is no live swarm: its row is deleted by the next checkpoint.
    CHECK(t.take_changes().swarms_dropped == std::vector<std::string>{"gone"});
    const auto swept = t.sweep(1100, limits(600, 600));
    CHECK(swept.incarnations == std::vector<worker_identity>{b});  // 600 s after 500
    CHECK(swept.swarms == std::vector<std::string>{"s"});          // 600 s after 400
    const auto later = t.sweep(1600, limits(600, 600));
    CHECK(later.incarnations == std::vector<worker_identity>{a});
    CHECK(later.swarms == std::vector<std::string>{"t"});
  }

  TEST_CASE("an expired incarnation is refused with incarnation_expired, a new one goes on") {
    clocked_service c;
    const worker_identity old{"s", "w0", "old"};
    REQUIRE(c.svc.attach(old).ok());
    REQUIRE(c.svc.ingest(old, events_from(1, 5, 0)).error.ok());
    c.now += 3600;
    CHECK(c.svc.sweep(limits(60, 0)).incarnations == 0);  // connected
    c.svc.detach(old);
    c.now += 59;
    CHECK(c.svc.sweep(limits(60, 0)).incarnations == 0);
    c.now += 1;
    const auto r = c.svc.sweep(limits(60, 0));
    CHECK(r.incarnations == 1);
    CHECK(c.svc.sequences().empty());  // the row is gone from memory
    CHECK(c.svc.retention().expired == 1);
    const status refused = c.svc.attach(old);
    CHECK(refused.code() == protocol::codes::incarnation_expired);
    // The client's new incarnation declares the old numbers lost, then goes on: counted once.
    const worker_identity fresh{"s", "w0", "new"};
    REQUIRE(c.svc.attach(fresh).ok());
    REQUIRE(c.svc.declare_gap(fresh, 1, 7).has_value());  // 6 and 7 were never acknowledged
    const auto more = c.svc.ingest(fresh, events_from(8, 2, 10));
    CHECK(more.applied == 2);
    CHECK(summary(c.svc, "s")->calls == 7);
  }

  TEST_CASE("an incarnation that never sent anything is forgotten without a record") {
    clocked_service c;
    const worker_identity quiet{"s", "w0", "quiet"};
    REQUIRE(c.svc.attach(quiet).ok());
    c.svc.detach(quiet);
    c.now += 100;
    CHECK(c.svc.sweep(limits(10, 0)).incarnations == 0);
    CHECK(c.svc.attach(quiet).ok());
  }

  TEST_CASE("an expired swarm keeps its spend: its budget goes on, it is not reset") {
    swarm_rules rules;
    rules.budget.base.tokens = 1000;  // warn at 800, critical at 1000
    clocked_service c(rules);
    const worker_identity w{"s", "w0", "a"};
    REQUIRE(c.svc.attach(w).ok());
    auto first = c.svc.ingest(w, events_from(1, 9, 0, 100));  // 900 tokens: warn
    REQUIRE(first.error.ok());
    CHECK(summary(c.svc, "s")->budget == severity::warn);
    c.svc.detach(w);
    c.now += 31 * kDay;
    const auto r = c.svc.sweep({});  // the defaults: 7 and 30 days
    CHECK(r.incarnations == 1);
    CHECK(r.swarms == 1);
    auto tomb = summary(c.svc, "s");
    REQUIRE(tomb.has_value());
    CHECK(tomb->expired == c.now);
    CHECK(tomb->fingerprints == 0);
    CHECK(tomb->workers == 0);
    CHECK(tomb->spent.tokens == 900);
    CHECK(tomb->budget == severity::warn);
    CHECK(c.svc.read([](const shared_economics_state& s) { return s.counters().tombstones; }) == 1);
    // A new worker of the same swarm: the budget continues at 900, critical at the 10th call.
    const worker_identity back{"s", "w0", "b"};
    REQUIRE(c.svc.attach(back).ok());
    const auto next = c.svc.ingest(back, events_from(1, 1, 5000, 100));
    REQUIRE(next.error.ok());
    REQUIRE(next.verdicts.size() == 1);
    CHECK(next.verdicts[0].kind == "budget");
    CHECK(next.verdicts[0].level == severity::critical);
    auto live = summary(c.svc, "s");
    CHECK(live->expired == 0);
    CHECK(live->spent.tokens == 1000);
  }

  TEST_CASE("detection does not depend on the wall clock") {
    // The same events under wall clocks years apart (no sweep): the same verdicts and digest.
    clocked_service early, late;
    late.now = early.now + 3650 * kDay;
    std::vector<std::string> v1, v2;  // as pushed
    for (std::uint64_t i = 1; i <= 40; ++i) {
      const worker_identity w{"s", test::worker_name(long(i % 3)), "a"};
      std::vector<protocol::event> one{wire_event((i + 2) / 3, 1, double(i))};
      for (auto& v : early.svc.ingest(w, one).verdicts) v1.push_back(protocol::serialize(v));
      for (auto& v : late.svc.ingest(w, one).verdicts) v2.push_back(protocol::serialize(v));
      late.now += 1000;  // and one of them moves on
    }
    CHECK_FALSE(v1.empty());
    CHECK(v1 == v2);
    CHECK(early.svc.read([](const shared_economics_state& s) { return s.digest(); }) ==
          late.svc.read([](const shared_economics_state& s) { return s.digest(); }));
  }

  TEST_CASE("a restore keeps expiry: expired stays refused, tombstones keep their spend") {
    for (const bool compact : {false, true}) {
      CAPTURE(compact);
      clocked_service c;
      auto store = open_ok();
      const worker_identity gone{"old", "w0", "a"}, stays{"live", "w0", "b"};
      REQUIRE(c.svc.ingest(gone, events_from(1, 4, 0, 50)).error.ok());
      REQUIRE(c.svc.ingest(stays, events_from(1, 3, 0)).error.ok());
      REQUIRE(write_checkpoint(*store, c.svc.take_checkpoint()).ok());
      c.now += 100;
      REQUIRE(c.svc.ingest(stays, events_from(4, 1, 10)).error.ok());
      c.now += 50;  // `old` idle 150 s, `live` 50 s
      const auto r = c.svc.sweep(limits(120, 120));
      CHECK(r.incarnations == 1);
      CHECK(r.swarms == 1);
      REQUIRE(write_checkpoint(*store, c.svc.take_checkpoint(compact)).ok());

      clocked_service back;
      back.now = c.now + 10;
      REQUIRE(back.svc.restore_from(*store).has_value());
      CHECK(back.svc.attach(gone).code() == protocol::codes::incarnation_expired);
      CHECK(back.svc.sequences() == c.svc.sequences());
      const auto tomb = summary(back.svc, "old");
      REQUIRE(tomb.has_value());
      CHECK(tomb->expired == c.now);
      CHECK(tomb->spent.tokens == 200);
      CHECK(back.svc.read([](const shared_economics_state& s) { return s.digest(); }) ==
            c.svc.read([](const shared_economics_state& s) { return s.digest(); }));
      // `live` was last active at c.now - 50 (its seen was written): it expires on time.
      back.now = c.now + 69;
      CHECK(back.svc.sweep(limits(120, 120)).swarms == 0);
      back.now = c.now + 70;
      const auto later = back.svc.sweep(limits(120, 120));
      CHECK(later.swarms == 1);
      CHECK(later.incarnations == 1);
    }
  }

  TEST_CASE("a silent worker's heartbeats keep it active across a crash and restart") {
    for (const bool heartbeats : {true, false}) {
      CAPTURE(heartbeats);
      clocked_service c;
      auto store = open_ok();
      const worker_identity quiet{"s", "w0", "a"};
      REQUIRE(c.svc.attach(quiet).ok());
      REQUIRE(c.svc.ingest(quiet, events_from(1, 3, 0)).error.ok());
      REQUIRE(write_checkpoint(*store, c.svc.take_checkpoint()).ok());
      for (int i = 0; i < 60; ++i) {  // an hour connected, heartbeats only
        c.now += 60;
        if (heartbeats) c.svc.touch(quiet);
        REQUIRE(write_checkpoint(*store, c.svc.take_checkpoint()).ok());
      }
      // kill -9: the connection's detach is never written. The restart sweeps at once.
      clocked_service back;
      back.now = c.now + 5;
      REQUIRE(back.svc.restore_from(*store).has_value());
      const auto swept = back.svc.sweep(limits(600, 600));
      CHECK(swept.incarnations == (heartbeats ? 0u : 1u));
      CHECK(swept.swarms == (heartbeats ? 0u : 1u));
    }
  }

  TEST_CASE("fault injection: a retention checkpoint failing at any step changes nothing") {
    std::size_t n = 1;
    for (;; ++n) {
      CAPTURE(n);
      clocked_service c;
      auto store = open_ok();
      const worker_identity a{"s", "w0", "a"}, b{"t", "w0", "b"};
      REQUIRE(c.svc.ingest(a, events_from(1, 3, 0, 10)).error.ok());
      REQUIRE(c.svc.ingest(b, events_from(1, 3, 0)).error.ok());
      REQUIRE(write_checkpoint(*store, c.svc.take_checkpoint()).ok());
      c.now += 100;
      REQUIRE(c.svc.ingest(b, events_from(4, 1, 10)).error.ok());
      c.now += 100;
      REQUIRE(c.svc.sweep(limits(150, 150, 0)).swarms == 1);
      const checkpoint second = c.svc.take_checkpoint(n % 2 == 0);
      fault_injecting_store faulty(*store, n);
      const auto s = write_checkpoint(faulty, second);
      if (s.ok()) break;
      clocked_service before;
      REQUIRE(before.svc.restore_from(*store).has_value());
      CHECK(before.svc.attach(a).ok());  // not expired yet
      CHECK(summary(before.svc, "s")->expired == 0);
      REQUIRE(write_checkpoint(*store, second).ok());
      clocked_service after;
      REQUIRE(after.svc.restore_from(*store).has_value());
      CHECK(after.svc.attach(a).code() == protocol::codes::incarnation_expired);
      CHECK(summary(after.svc, "s")->expired != 0);
      CHECK(summary(after.svc, "s")->spent.tokens == 30);
    }
    CHECK(n > 6);
  }

  TEST_CASE("a kept schema-3 database is migrated to the current schema and restores exactly") {
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 3);
    // The sequence that wrote it (tests/daemon/data/README.md).
    swarm_service want;
    const auto feed = [&](const std::string& swarm, int n, std::uint64_t first, double t0) {
      for (int w = 0; w < 3; ++w) {
        std::vector<protocol::event> batch;
        for (int i = 0; i < n; ++i) {
          batch.push_back(wire_event(first + std::uint64_t(i), std::uint64_t(1 + i % 4), t0 + i));
        }
        REQUIRE(want.ingest({swarm, test::worker_name(w), "inc"}, batch).error.ok());
      }
    };
    feed("s1", 30, 1, 0);
    feed("s2", 5, 1, 0);
    std::vector<protocol::event> paid{wire_event(6, 1, 5)};
    paid[0].spent = {1000, 0.25};
    REQUIRE(want.ingest({"s2", "w0", "inc"}, paid).error.ok());
    feed("s3", 12, 1, 100);
    REQUIRE(want.complete("s1").has_value());
    feed("s3", 4, 13, 200);
    const auto digest = [](const swarm_service& s) {
      return s.read([](const shared_economics_state& x) { return x.digest(); });
    };
    {
      auto store = open_ok(path);
      clocked_service got;
      REQUIRE(got.svc.restore_from(*store).has_value());
      CHECK(digest(got.svc) == digest(want));
      CHECK(got.svc.sequences() == want.sequences());
      CHECK(summary(got.svc, "s2")->spent.tokens == 1000);
      CHECK(summary(got.svc, "s3")->expired == 0);
      // A migrated row's last activity is unknown: it counts from this start.
      got.now += 99;
      CHECK(got.svc.sweep(limits(100, 100)).incarnations == 0);
      got.now += 1;
      const auto r = got.svc.sweep(limits(100, 100));
      CHECK(r.incarnations == 9);  // s1's rows outlived its swarm_complete
      CHECK(r.swarms == 2);
      REQUIRE(write_checkpoint(*store, got.svc.take_checkpoint()).ok());
      clocked_service again;
      REQUIRE(again.svc.restore_from(*store).has_value());
      CHECK(again.svc.sequences().empty());
      CHECK(again.svc.attach({"s3", "w0", "inc"}).code() == protocol::codes::incarnation_expired);
      CHECK(summary(again.svc, "s2")->spent.tokens == 1000);
      CHECK(summary(again.svc, "s2")->expired != 0);
    }
    {
      SQLite::Database db(path);
      CHECK(db.execAndGet("PRAGMA user_version").getInt() ==
            sqlite_checkpoint_store::kSchemaVersion);
      CHECK(db.execAndGet("SELECT count(*) FROM expired_incarnations").getInt() == 9);
      CHECK(db.execAndGet("SELECT count(*) FROM sequences").getInt() == 0);
    }  // closed: open() takes the file's exclusive lock
    // A second open finds the current version and migrates nothing.
    CHECK(sqlite_checkpoint_store::open(path).has_value());
  }

  TEST_CASE("a kept schema-4 database is migrated to the current schema and restores exactly") {
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 4);
    clocked_service want;  // the sequence that wrote it (tests/daemon/data/README.md)
    schema4_sequence(want, nullptr);
    const auto digest = [](const swarm_service& s) {
      return s.read([](const shared_economics_state& x) { return x.digest(); });
    };
    {
      auto store = open_ok(path);
      clocked_service got;
      got.now = want.now;
      const auto r = got.svc.restore_from(*store);
      REQUIRE(r.has_value());
      CHECK(r->records == 2);
      CHECK(digest(got.svc) == digest(want.svc));
      CHECK(got.svc.sequences() == want.svc.sequences());
      CHECK(got.svc.attach({"old", "w0", "a"}).code() == protocol::codes::incarnation_expired);
      CHECK(summary(got.svc, "s2")->spent.tokens == 1000);
      CHECK(summary(got.svc, "old")->expired != 0);
      CHECK(summary(got.svc, "old")->spent.tokens == 200);
      // A compaction in chunks commits to the migrated file, step by step, and restores.
      compact_restoring(got, *store, digest(want.svc));
      clocked_service again;
      again.now = got.now;
      const auto back = again.svc.restore_from(*store);
      REQUIRE(back.has_value());
      CHECK(back->records == 0);  // the two migrated records were covered (and trimmed)
      CHECK(again.svc.sequences() == want.svc.sequences());
    }
    {
      SQLite::Database db(path);
      CHECK(db.execAndGet("PRAGMA user_version").getInt() ==
            sqlite_checkpoint_store::kSchemaVersion);
      CHECK(db.execAndGet("SELECT generation FROM compaction").getInt() == 1);
      CHECK(SQLite::Database(path + "-rows").execAndGet("SELECT count(*) FROM staged").getInt() ==
            0);
      CHECK(db.execAndGet("SELECT count(*) FROM expired_incarnations").getInt() == 4);
    }  // closed: open() takes the file's exclusive lock
    // A second open finds the current version and migrates nothing.
    CHECK(sqlite_checkpoint_store::open(path).has_value());
  }

  TEST_CASE("a kept schema-5 database with a flipped compaction not yet folded is migrated") {
    // Schema 6 adds the log's floor (0: a schema-5 flip deleted the records it covered). The
    // file stops after a flip: staged rows of the current generation overlay the rows, and
    // one record follows the boundary.
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 5);
    {
      SQLite::Database db(path);
      REQUIRE(db.execAndGet("SELECT count(*) FROM staged WHERE generation = 1").getInt() > 0);
      REQUIRE(db.execAndGet("SELECT count(*) FROM log").getInt() == 1);
    }
    clocked_service want;  // the sequence that wrote it (tests/daemon/data/README.md)
    schema5_sequence(want, nullptr);
    const auto digest = [](const swarm_service& s) {
      return s.read([](const shared_economics_state& x) { return x.digest(); });
    };
    {
      auto store = open_ok(path);
      CHECK(store->migrated_from() == 5);
      clocked_service got;
      const auto r = got.svc.restore_from(*store);
      REQUIRE(r.has_value());
      CHECK(r->records == 1);
      CHECK(digest(got.svc) == digest(want.svc));
      CHECK(got.svc.sequences() == want.svc.sequences());
      CHECK(summary(got.svc, "s2")->spent.tokens == 1000);
      // The staged rows fold, then a new compaction flips and trims, each commit restoring.
      compact_restoring(got, *store, digest(want.svc));
      clocked_service again;
      const auto back = again.svc.restore_from(*store);
      REQUIRE(back.has_value());
      CHECK(back->records == 0);
      CHECK(again.svc.sequences() == want.svc.sequences());
    }
    {
      SQLite::Database db(path);
      CHECK(db.execAndGet("PRAGMA user_version").getInt() ==
            sqlite_checkpoint_store::kSchemaVersion);
      CHECK(db.execAndGet("SELECT generation FROM compaction").getInt() == 2);
      CHECK(db.execAndGet("SELECT log_floor FROM compaction").getInt() >= 1);
      CHECK(SQLite::Database(path + "-rows").execAndGet("SELECT count(*) FROM staged").getInt() ==
            0);
      CHECK(db.execAndGet("SELECT count(*) FROM log").getInt() == 0);
    }  // closed: open() takes the file's exclusive lock
    const auto again = sqlite_checkpoint_store::open(path);
    REQUIRE(again.has_value());
    CHECK((*again)->migrated_from() == 0);
  }

  TEST_CASE("a kept schema-6 database moves its rows to the rows file, replacing a leftover") {
    // Schema 7 keeps the fingerprint rows and staged rows in FILE-rows. The kept file stops
    // after a flip (tests/daemon/data/README.md): 16 staged rows of the current generation,
    // the log floor 1, a covered record (id 1) and one after it (id 2).
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 6);
    {
      SQLite::Database db(path);
      REQUIRE(db.execAndGet("SELECT count(*) FROM staged WHERE generation = 1").getInt() == 16);
      REQUIRE(db.execAndGet("SELECT count(*) FROM log").getInt() == 2);
      REQUIRE(db.execAndGet("SELECT log_floor FROM compaction").getInt() == 1);
    }
    {
      // A migration cut short by a crash leaves its record (the pair id it chose) in the main
      // file, still at schema 6, and a rows file beside it: replaced, never read.
      SQLite::Database db(path, SQLite::OPEN_READWRITE);
      db.exec(
          "CREATE TABLE migrating (id INTEGER PRIMARY KEY CHECK (id = 0), pair INTEGER "
          "NOT NULL); INSERT INTO migrating VALUES (0, 99)");
    }
    {
      auto leftover = sqlite_rows_store::create(path + "-rows", 99);
      REQUIRE(leftover.has_value());
      fingerprint_row junk;
      junk.swarm = "junk";
      junk.key = {fingerprint_kind::exact, 5};
      junk.stats.tool = "t";
      junk.stats.calls = 1;
      REQUIRE((*leftover)->begin().ok());
      REQUIRE((*leftover)->stage_fingerprint(1, junk).ok());
      REQUIRE((*leftover)->commit().ok());
    }
    restore_kept_flip(path, 6);
    SQLite::Database db(path);
    CHECK(db.execAndGet("PRAGMA user_version").getInt() == sqlite_checkpoint_store::kSchemaVersion);
    CHECK(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name IN ('fingerprints', "
                        "'staged', 'migrating')")
              .getInt() == 0);
    CHECK(db.execAndGet("SELECT generation FROM compaction").getInt() == 2);
    CHECK(db.execAndGet("SELECT pair FROM compaction").getInt64() == 99);
    CHECK(db.execAndGet("SELECT count(*) FROM log").getInt() == 0);
    SQLite::Database rows(path + "-rows");
    CHECK(rows.execAndGet("SELECT count(*) FROM staged").getInt() == 0);
    CHECK(rows.execAndGet("SELECT count(*) FROM fingerprints").getInt() > 0);
    CHECK(rows.execAndGet("SELECT count(*) FROM fingerprints WHERE swarm = 'junk'").getInt() == 0);
    CHECK(rows.execAndGet("SELECT main FROM pair").getInt64() ==
          db.execAndGet("SELECT pair FROM compaction").getInt64());
  }

  TEST_CASE("a kept schema-7 database reads its fixed-format rows and writes compact ones") {
    // Schema 8 writes fingerprint blobs in the compact format and reads the fixed one of
    // schemas 2 to 7 (docs/storage.md, "7 -> 8"). The kept file stops after a flip
    // (tests/daemon/data/README.md): 16 staged rows of the current generation (2) in the rows
    // file, not folded, the log floor 1, a covered record (id 1) and one after it (id 2).
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 7);
    // Rows of each format in a table of the rows file (the first byte: the fixed format's
    // level, 0..3, or 0xC0 | level).
    const auto rows_in = [&](const std::string& table, bool compact) {
      SQLite::Database rows(path + "-rows");
      return rows
          .execAndGet("SELECT count(*) FROM " + table +
                      " WHERE data IS NOT NULL AND hex(substr(data, 1, 1)) " +
                      (compact ? "" : "NOT ") + "IN ('C0', 'C1', 'C2', 'C3')")
          .getInt();
    };
    const int fixed_before = rows_in("fingerprints", false);
    REQUIRE(fixed_before > 0);
    REQUIRE(rows_in("fingerprints", true) == 0);
    REQUIRE(rows_in("staged", false) == 16);
    {
      SQLite::Database rows(path + "-rows");
      REQUIRE(rows.execAndGet("PRAGMA user_version").getInt() == 7);
    }
    // The staged rows fold as they are; the new compaction writes what the replayed record
    // changed, in the compact format.
    const std::uint64_t want = restore_kept_flip(path, 7);
    CHECK(rows_in("staged", false) + rows_in("staged", true) == 0);
    CHECK(rows_in("fingerprints", true) > 0);   // rewritten by the new compaction
    CHECK(rows_in("fingerprints", false) > 0);  // unchanged since schema 7: read as they are
    {
      SQLite::Database db(path);
      CHECK(db.execAndGet("PRAGMA user_version").getInt() ==
            sqlite_checkpoint_store::kSchemaVersion);
      SQLite::Database rows(path + "-rows");
      CHECK(rows.execAndGet("PRAGMA user_version").getInt() == 7);
    }
    // A second open finds the current version, migrates nothing and restores the same state.
    auto again = sqlite_checkpoint_store::open(path);
    REQUIRE(again.has_value());
    CHECK((*again)->migrated_from() == 0);
    clocked_service reopened;
    REQUIRE(reopened.svc.restore_from(**again).has_value());
    CHECK(reopened.svc.read([](const shared_economics_state& x) { return x.digest(); }) == want);
  }

  TEST_CASE("a kept schema-7 database without its rows file is refused and stays at schema 7") {
    // The version moves only once the rows file opened: the build that wrote the file can
    // still read it when its rows file is put back.
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 7);
    std::filesystem::rename(path + "-rows", path + ".aside");
    const auto opened = sqlite_checkpoint_store::open(path);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().message().find(path + "-rows is missing") != std::string::npos);
    {
      SQLite::Database db(path);
      CHECK(db.execAndGet("PRAGMA user_version").getInt() == 7);
    }
    std::filesystem::rename(path + ".aside", path + "-rows");
    auto store = open_ok(path);
    CHECK(store->migrated_from() == 7);
  }

  TEST_CASE("a kept schema-6 database beside a rows file it did not make is refused, untouched") {
    // An old backup of the main file put back beside a newer rows file: never migrated over it.
    test::temp_dir dir;
    const std::string path = kept_copy(dir, 6);
    {
      auto other = sqlite_rows_store::create(path + "-rows", 5);
      REQUIRE(other.has_value());
    }
    const auto bytes = [](const std::string& f) {
      std::ifstream in(f, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string main_before = bytes(path), rows_before = bytes(path + "-rows");
    const auto opened = sqlite_checkpoint_store::open(path);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().message() ==
          "refusing " + path + ": it is of schema 6 (which has no rows file), but " + path +
              "-rows beside it belongs to another database; move that file away; the file was "
              "not modified");
    CHECK(bytes(path + "-rows") == rows_before);
    SQLite::Database db(path);
    CHECK(db.execAndGet("PRAGMA user_version").getInt() == 6);
    CHECK(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'migrating'").getInt() ==
          0);
    CHECK(db.execAndGet("SELECT count(*) FROM fingerprints").getInt() > 0);
    CHECK(bytes(path) == main_before);
  }

  TEST_CASE("a failed retention checkpoint merged with the next: the newer line wins") {
    const worker_identity a{"s", "w0", "a"}, b{"s", "w1", "b"};
    checkpoint failed;
    failed.sequences = {{a, 5, 10}};
    failed.retention.dropped = {b};
    failed.retention.expired = {{b, 10}};
    failed.retention.swarms_dropped = {"t"};
    checkpoint newer;
    newer.sequences = {{b, 1, 20}};  // b came back (a new row) after it was dropped
    newer.retention.dropped = {a};   // a expired after its row was written
    newer.retention.forgotten = {b};
    newer.retention.swarms_seen = {{"t", 20}};
    failed.merge_newer(std::move(newer));
    CHECK(failed.retention.dropped == std::vector<worker_identity>{a});  // written after a's row
    CHECK(failed.retention.expired.empty());
    CHECK(failed.retention.forgotten == std::vector<worker_identity>{b});
    CHECK(failed.retention.swarms_dropped.empty());
    REQUIRE(failed.retention.swarms_seen.size() == 1);
    CHECK(failed.sequences.size() == 2);
    // Written to a store in this order, it leaves b's new row and no row of a.
    auto store = open_ok();
    REQUIRE(write_checkpoint(*store, failed).ok());
    swarm_service svc;
    REQUIRE(svc.restore_from(*store).has_value());
    CHECK(svc.sequences() == std::vector<sequence_row>{{b, 1, 0}});
  }

  TEST_CASE("a truncated swarm expiry in a log record refuses the restore") {
    std::string record(1, char(event_log_writer::kFormat));
    record += char(4);  // expire, then a swarm name cut short
    record += std::string(
        "\x05\x00"
        "ab",
        4);  // two literals: \x00ab would be one escape
    shared_economics_state state;
    const status s = replay_log_record(record, state);
    CHECK(s.message() == "a log record has a truncated swarm expiry");
    event_log_writer w;
    w.expire("s", 123.5);
    const std::string whole = w.take();
    CHECK(replay_log_record(whole.substr(0, whole.size() - 1), state).message() ==
          "a log record has a truncated swarm expiry");
  }
}
