#include <doctest/doctest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <fstream>

#include "loopguard/daemon/fault_injecting_store.hpp"
#include "loopguard/daemon/sqlite_checkpoint_store.hpp"
#include "loopguard/daemon/swarm_service.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::temp_dir;
using loopguard::test::wire_event;

namespace {

std::unique_ptr<sqlite_checkpoint_store> open_ok(const std::string& path) {
  std::string error;
  auto store = sqlite_checkpoint_store::open(path, error);
  REQUIRE_MESSAGE(store, error);
  return store;
}

// Events of three workers over a few fingerprints, numbered from `first_seq`.
void feed(swarm_service& svc, const std::string& swarm, int n, std::uint64_t first_seq, double t0) {
  for (int w = 0; w < 3; ++w) {
    std::vector<protocol::event> batch;
    for (int i = 0; i < n; ++i) {
      batch.push_back(wire_event(first_seq + std::uint64_t(i), std::uint64_t(1 + i % 4), t0 + i));
    }
    const auto r = svc.ingest({swarm, test::worker_name(w), "inc"}, batch);
    REQUIRE_FALSE(r.error.has_value());
  }
}

struct loaded {
  std::uint64_t digest = 0;
  std::vector<sequence_row> sequences;
};

loaded load(const std::string& path) {
  auto store = open_ok(path);
  stored_state st;
  const auto s = store->load(st);
  REQUIRE_MESSAGE(s.ok(), s.error);
  shared_economics_state state;
  state.restore(st.state);
  std::sort(st.sequences.begin(), st.sequences.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  return {state.digest(), st.sequences};
}

std::uint64_t digest_of(const swarm_service& svc) {
  return svc.read([](const shared_economics_state& s) { return s.digest(); });
}

}  // namespace

TEST_SUITE("sqlite_checkpoint_store") {
  TEST_CASE("a checkpoint round-trips: restore equals the state digest") {
    temp_dir dir;
    const auto path = dir.file("lg.db");
    swarm_service svc;
    feed(svc, "s1", 30, 1, 0);
    feed(svc, "s2", 5, 1, 0);
    {
      auto store = open_ok(path);
      std::uint64_t epoch = 0;
      const auto s = write_checkpoint(*store, svc.take_checkpoint(epoch));
      REQUIRE_MESSAGE(s.ok(), s.error);
    }
    const auto got = load(path);
    CHECK(got.digest == digest_of(svc));
    REQUIRE(got.sequences.size() == 6);
    CHECK(got.sequences[0].seq == 30);

    SUBCASE("incremental: the next checkpoint holds only what changed, and completes clear") {
      std::uint64_t epoch = 0;
      feed(svc, "s2", 1, 6, 10);  // s2 only, fingerprint 1
      CHECK(svc.complete("s1", epoch));
      auto c = svc.take_checkpoint(epoch);
      CHECK(c.state.fingerprints.size() == 2);  // s2's exact + structural of fingerprint 1
      CHECK(c.state.cleared_swarms == std::vector<std::string>{"s1"});
      CHECK(c.sequences.size() == 3);
      {
        auto store = open_ok(path);
        REQUIRE(write_checkpoint(*store, c).ok());
      }
      CHECK(load(path).digest == digest_of(svc));
    }
  }

  TEST_CASE("a restored service continues exactly once: resent events are duplicates") {
    temp_dir dir;
    const auto path = dir.file("lg.db");
    swarm_service svc;
    feed(svc, "s1", 12, 1, 0);
    {
      auto store = open_ok(path);
      std::uint64_t epoch = 0;
      REQUIRE(write_checkpoint(*store, svc.take_checkpoint(epoch)).ok());
    }
    auto store = open_ok(path);
    stored_state st;
    REQUIRE(store->load(st).ok());
    swarm_service again;
    again.restore(st);
    CHECK(again.durable_seq({"s1", "w0", "inc"}) == 12);
    std::vector<protocol::event> resend;
    for (std::uint64_t i = 1; i <= 12; ++i) resend.push_back(wire_event(i, 1 + (i - 1) % 4, 0));
    const auto r = again.ingest({"s1", "w0", "inc"}, resend);
    CHECK(r.duplicates == 12);
    CHECK(r.applied == 0);
    CHECK(digest_of(again) == digest_of(svc));
  }

  TEST_CASE("fault injection: a checkpoint failing at any step changes nothing") {
    // Loop N upward until the checkpoint has no Nth step; every failure must leave the file
    // at the previous checkpoint, and a retry must then write everything.
    std::size_t n = 1;
    for (;; ++n) {
      CAPTURE(n);
      temp_dir dir;
      const auto path = dir.file("lg.db");
      swarm_rules rules;
      rules.max_fingerprints_per_swarm = 16;  // so evictions (erase steps) happen too
      swarm_service svc(rules);
      feed(svc, "s1", 12, 1, 0);
      feed(svc, "gone", 3, 1, 0);
      std::uint64_t epoch = 0;
      {
        auto store = open_ok(path);
        REQUIRE(write_checkpoint(*store, svc.take_checkpoint(epoch)).ok());
      }
      const auto first = load(path);

      REQUIRE(svc.complete("gone", epoch));
      feed(svc, "s1", 4, 13, 20);
      for (std::uint64_t fp = 100; fp < 112; ++fp) {  // evicts the coldest of s1
        REQUIRE_FALSE(svc.ingest({"s1", "w9", "inc"}, {wire_event(fp - 99, fp, 30)}).error);
      }
      checkpoint second = svc.take_checkpoint(epoch);
      REQUIRE_FALSE(second.state.erased.empty());

      auto store = open_ok(path);
      fault_injecting_store faulty(*store, n);
      const auto s = write_checkpoint(faulty, second);
      if (s.ok()) {
        CHECK_FALSE(faulty.failed());
        break;
      }
      CHECK(s.error.find("injected fault") != std::string::npos);
      store.reset();
      const auto after_failure = load(path);
      CHECK(after_failure.digest == first.digest);
      CHECK(after_failure.sequences == first.sequences);

      store = open_ok(path);
      REQUIRE(write_checkpoint(*store, second).ok());
      store.reset();
      CHECK(load(path).digest == digest_of(svc));
    }
    CHECK(n > 20);  // every kind of step was reached
  }

  TEST_CASE("files that are not ours are refused and left untouched") {
    temp_dir dir;
    std::string error;
    SUBCASE("not SQLite at all") {
      const auto path = dir.file("garbage.db");
      std::ofstream(path) << "this is not a database, just some text that is long enough";
      const auto before = test::read_bytes(path);
      CHECK_FALSE(sqlite_checkpoint_store::open(path, error));
      CHECK(error.find("not a SQLite database") != std::string::npos);
      CHECK(error.find(path) != std::string::npos);
      CHECK(test::read_bytes(path) == before);
    }
    SUBCASE("a newer schema version") {
      const auto path = dir.file("future.db");
      { auto store = open_ok(path); }
      {
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("PRAGMA user_version = 99");
      }
      const auto before = test::read_bytes(path);
      CHECK_FALSE(sqlite_checkpoint_store::open(path, error));
      CHECK(error.find("newer loopguardd (schema version 99") != std::string::npos);
      CHECK(test::read_bytes(path) == before);
    }
    SUBCASE("another application's database") {
      const auto path = dir.file("other.db");
      {
        SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
      }
      const auto before = test::read_bytes(path);
      CHECK_FALSE(sqlite_checkpoint_store::open(path, error));
      CHECK(error.find("no loopguard schema version") != std::string::npos);
      CHECK(test::read_bytes(path) == before);
    }
    SUBCASE("corrupted pages") {
      const auto path = dir.file("corrupt.db");
      swarm_service svc;
      feed(svc, "s1", 200, 1, 0);
      {
        auto store = open_ok(path);
        std::uint64_t epoch = 0;
        REQUIRE(write_checkpoint(*store, svc.take_checkpoint(epoch)).ok());
      }
      auto bytes = test::read_bytes(path);
      REQUIRE(bytes.size() > 8192);
      for (std::size_t i = 4096 + 100; i < bytes.size(); i += 7) bytes[i] = char(i * 31);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
      CHECK_FALSE(sqlite_checkpoint_store::open(path, error));
      CHECK(error.find("refusing " + path) != std::string::npos);
      CHECK(test::read_bytes(path) == bytes);
    }
  }

  TEST_CASE("a new database gets WAL, the schema version and our application id") {
    temp_dir dir;
    const auto path = dir.file("new.db");
    { auto store = open_ok(path); }
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    CHECK(db.execAndGet("PRAGMA user_version").getInt() == sqlite_checkpoint_store::kSchemaVersion);
    CHECK(db.execAndGet("PRAGMA application_id").getInt() ==
          sqlite_checkpoint_store::kApplicationId);
    CHECK(db.execAndGet("PRAGMA journal_mode").getString() == "wal");
  }
}
