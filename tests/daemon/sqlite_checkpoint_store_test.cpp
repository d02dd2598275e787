#include <doctest/doctest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <fstream>

#include "fault_injecting_store.hpp"
#include "service/swarm_service.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "store/sqlite_file.hpp"
#include "store_util.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::digest_of;
using loopguard::test::load;
using loopguard::test::open_ok;
using loopguard::test::refusal;
using loopguard::test::temp_dir;
using loopguard::test::wire_event;

namespace {

// Events of three workers over a few fingerprints, numbered from `first_seq`.
void feed(swarm_service& svc, const std::string& swarm, int n, std::uint64_t first_seq, double t0) {
  for (int w = 0; w < 3; ++w) {
    std::vector<protocol::event> batch;
    for (int i = 0; i < n; ++i) {
      batch.push_back(wire_event(first_seq + std::uint64_t(i), std::uint64_t(1 + i % 4), t0 + i));
    }
    const auto r = svc.ingest({swarm, test::worker_name(w), "inc"}, batch);
    REQUIRE(r.error.ok());
  }
}

// Commits `records` to the log of `store`, as a group commit does.
void append_records(checkpoint_store& store, const std::vector<std::string>& records) {
  REQUIRE(store.begin().ok());
  for (const auto& r : records) REQUIRE(store.append_log(r).ok());
  REQUIRE(store.commit().ok());
}

}  // namespace

TEST_SUITE("sqlite_checkpoint_store") {
  TEST_CASE("a checkpoint round-trips: restore equals the state digest") {
    swarm_service svc;
    feed(svc, "s1", 30, 1, 0);
    feed(svc, "s2", 5, 1, 0);
    auto store = open_ok();
    const auto s = write_checkpoint(*store, svc.take_checkpoint(true));
    REQUIRE_MESSAGE(s.ok(), s.message());
    const auto got = load(*store);
    CHECK(got.digest == digest_of(svc));
    REQUIRE(got.sequences.size() == 6);
    CHECK(got.sequences[0].seq == 30);

    SUBCASE("incremental: the next compaction holds only what changed, and completes clear") {
      feed(svc, "s2", 1, 6, 10);  // s2 only, fingerprint 1
      CHECK(svc.complete("s1").has_value());
      auto c = svc.take_checkpoint(true);
      CHECK(c.state.fingerprints.size() == 2);  // s2's exact + structural of fingerprint 1
      CHECK(c.state.cleared_swarms == std::vector<std::string>{"s1"});
      CHECK(c.sequences.size() == 3);
      REQUIRE(write_checkpoint(*store, c).ok());
      CHECK(load(*store).digest == digest_of(svc));
    }
  }

  TEST_CASE("a restored service continues exactly once: resent events are duplicates") {
    swarm_service svc;
    feed(svc, "s1", 12, 1, 0);
    auto store = open_ok();
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
    swarm_service again;
    REQUIRE(again.restore_from(*store).has_value());
    CHECK(again.durable_seq({"s1", "w0", "inc"}) == 12);
    std::vector<protocol::event> resend;
    for (std::uint64_t i = 1; i <= 12; ++i) resend.push_back(wire_event(i, 1 + (i - 1) % 4, 0));
    const auto r = again.ingest({"s1", "w0", "inc"}, resend);
    CHECK(r.duplicates == 12);
    CHECK(r.applied == 0);
    CHECK(digest_of(again) == digest_of(svc));
  }

  TEST_CASE("fault injection: a checkpoint failing at any step changes nothing") {
    // Loop N upward until the checkpoint has no Nth step; every failure must leave the store
    // at the previous checkpoint, and a retry on the same store must then write everything.
    std::size_t n = 1;
    for (;; ++n) {
      CAPTURE(n);
      swarm_rules rules;
      rules.max_fingerprints_per_swarm = 16;  // so evictions (erase steps) happen too
      swarm_service svc(rules);
      feed(svc, "s1", 12, 1, 0);
      feed(svc, "gone", 3, 1, 0);
      auto store = open_ok();
      REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
      const auto first = load(*store, rules);

      REQUIRE(svc.complete("gone").has_value());
      feed(svc, "s1", 4, 13, 20);
      for (std::uint64_t fp = 100; fp < 112; ++fp) {  // evicts the coldest of s1
        REQUIRE(svc.ingest({"s1", "w9", "inc"}, {wire_event(fp - 99, fp, 30)}).error.ok());
      }
      checkpoint second = svc.take_checkpoint(true);  // a compaction over the first's log
      REQUIRE_FALSE(second.state.erased.empty());

      fault_injecting_store faulty(*store, n);
      const auto s = write_checkpoint(faulty, second);
      if (s.ok()) {
        CHECK_FALSE(faulty.failed());
        break;
      }
      CHECK(s.message() == "injected fault at step " + std::to_string(n));
      const auto after_failure = load(*store, rules);
      CHECK(after_failure.digest == first.digest);
      CHECK(after_failure.sequences == first.sequences);

      REQUIRE(write_checkpoint(*store, second).ok());
      CHECK(load(*store, rules).digest == digest_of(svc));
    }
    CHECK(n > 20);  // every kind of step was reached
  }

  TEST_CASE("files that are not ours are refused and left untouched") {
    temp_dir dir;
    SUBCASE("not SQLite at all") {
      const auto path = dir.file("garbage.db");
      std::ofstream(path) << "this is not a database, just some text that is long enough";
      const auto before = test::read_bytes(path);
      const auto why = refusal(path);
      CHECK(why.find("not a SQLite database") != std::string::npos);
      CHECK(why.find(path) != std::string::npos);
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
      CHECK(refusal(path).find("newer loopguardd (schema version 99") != std::string::npos);
      CHECK(test::read_bytes(path) == before);
    }
    SUBCASE("another application's database") {
      const auto path = dir.file("other.db");
      {
        SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
      }
      const auto before = test::read_bytes(path);
      CHECK(refusal(path).find("no loopguard schema version") != std::string::npos);
      CHECK(test::read_bytes(path) == before);
    }
    SUBCASE("corrupted pages") {
      const auto path = dir.file("corrupt.db");
      swarm_service svc;
      feed(svc, "s1", 200, 1, 0);
      {
        auto store = open_ok(path);
        REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
      }
      auto bytes = test::read_bytes(path);
      REQUIRE(bytes.size() > 8192);
      for (std::size_t i = 4096 + 100; i < bytes.size(); i += 7) bytes[i] = char(i * 31);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
      CHECK(refusal(path).find("refusing " + path) != std::string::npos);
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

  TEST_CASE("sqlite_file::configure: the connection settings of docs/storage.md") {
    temp_dir dir;
    const auto path = dir.file("settings.db");
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(sqlite_file::configure(db, path, 2048, 256).ok());
    CHECK(db.execAndGet("PRAGMA journal_mode").getString() == "wal");
    CHECK(db.execAndGet("PRAGMA locking_mode").getString() == "exclusive");
    CHECK(db.execAndGet("PRAGMA synchronous").getInt() == 2);    // FULL
    CHECK(db.execAndGet("PRAGMA secure_delete").getInt() == 2);  // FAST (Debian's default: 1)
    CHECK(db.execAndGet("PRAGMA cache_size").getInt() == -2048);
    CHECK(db.execAndGet("PRAGMA wal_autocheckpoint").getInt() == 256);
  }

  TEST_CASE("the log: each checkpoint is one record, restore replays completes and evictions") {
    swarm_rules rules;
    rules.max_fingerprints_per_swarm = 16;  // evictions happen during the replay too
    swarm_service svc(rules);
    auto store = open_ok();
    feed(svc, "s1", 12, 1, 0);
    feed(svc, "gone", 3, 1, 0);
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
    REQUIRE(svc.complete("gone").has_value());
    for (std::uint64_t fp = 100; fp < 112; ++fp) {
      REQUIRE(svc.ingest({"s1", "w9", "inc"}, {wire_event(fp - 99, fp, 30)}).error.ok());
    }
    const checkpoint second = svc.take_checkpoint();
    CHECK(second.state.empty());  // no rows between compactions
    REQUIRE(second.log.size() == 1);
    REQUIRE(write_checkpoint(*store, second).ok());
    CHECK(svc.take_checkpoint().empty());  // nothing happened since

    const auto got = load(*store, rules);
    CHECK(got.records == 2);
    CHECK(got.digest == digest_of(svc));
    CHECK(got.sequences.size() == 7);  // s1: w0..w2 and w9; gone: w0..w2

    // A service restored from the store continues exactly once and compacts what it replayed.
    swarm_service again(rules);
    REQUIRE(again.restore_from(*store).has_value());
    CHECK(again.log_bytes() > 0);
    CHECK(digest_of(again) == digest_of(svc));
    CHECK(again.ingest({"s1", "w9", "inc"}, {wire_event(12, 111, 30)}).duplicates == 1);
    const checkpoint compaction = again.take_checkpoint(true);
    CHECK(compaction.log.empty());
    CHECK_FALSE(compaction.state.fingerprints.empty());
    CHECK(compaction.state.cleared_swarms == std::vector<std::string>{"gone"});
    REQUIRE(write_checkpoint(*store, compaction).ok());
    CHECK(again.log_bytes() == 0);
    const auto compacted = load(*store, rules);
    CHECK(compacted.digest == digest_of(svc));
    CHECK(compacted.records == 0);
  }

  TEST_CASE("compaction: rows plus the records after them restore the digest") {
    swarm_service svc;
    auto store = open_ok();
    feed(svc, "s1", 10, 1, 0);
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
    feed(svc, "s1", 10, 11, 10);
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint(true)).ok());
    feed(svc, "s1", 10, 21, 20);
    feed(svc, "s2", 4, 1, 20);
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
    const auto got = load(*store);
    CHECK(got.records == 1);
    CHECK(got.digest == digest_of(svc));
    REQUIRE(got.sequences.size() == 6);  // s1 and s2: w0..w2 each
    CHECK(got.sequences[0].seq == 30);
  }

  TEST_CASE("fault injection: failed log appends and compactions, retried merged, lose nothing") {
    // The checkpointer's path: a checkpoint fails at step N, the next one is merged into it
    // (checkpoint::merge_newer) and the merge commits on the same store. Both kinds fail in
    // turn: a log record followed by a compaction, and a compaction followed by a log record.
    for (const bool failing_compacts : {false, true}) {
      CAPTURE(failing_compacts);
      std::size_t n = 1;
      for (;; ++n) {
        CAPTURE(n);
        swarm_rules rules;
        rules.max_fingerprints_per_swarm = 16;
        swarm_service svc(rules);
        feed(svc, "s1", 12, 1, 0);
        feed(svc, "gone", 3, 1, 0);
        auto store = open_ok();
        REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
        const auto first = load(*store, rules);

        REQUIRE(svc.complete("gone").has_value());
        feed(svc, "s1", 4, 13, 20);
        checkpoint failing = svc.take_checkpoint(failing_compacts);
        fault_injecting_store faulty(*store, n);
        if (write_checkpoint(faulty, failing).ok()) {
          CHECK_FALSE(faulty.failed());
          break;
        }
        const auto after_failure = load(*store, rules);
        CHECK(after_failure.digest == first.digest);
        CHECK(after_failure.sequences == first.sequences);

        for (std::uint64_t fp = 100; fp < 112; ++fp) {  // evictions in the retried part
          REQUIRE(svc.ingest({"s1", "w9", "inc"}, {wire_event(fp - 99, fp, 30)}).error.ok());
        }
        const std::uint64_t failed_epoch = failing.epoch;
        failing.merge_newer(svc.take_checkpoint(!failing_compacts));
        CHECK(failing.compact);
        CHECK(failing.epoch == failed_epoch + 1);  // acknowledges what both epochs hold
        REQUIRE(write_checkpoint(*store, failing).ok());
        const auto retried = load(*store, rules);
        CHECK(retried.digest == digest_of(svc));
        CHECK(retried.sequences.size() == 7);
      }
      CHECK(n > 5);  // begin, truncate or append, rows or sequences, commit were all reached
    }
  }

  TEST_CASE("a malformed log record refuses the restore and leaves the state empty") {
    swarm_service svc;
    feed(svc, "s1", 3, 1, 0);
    auto store = open_ok();
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());  // a good record first
    append_records(*store, {std::string("\x01\x02\x05", 3)});       // an event op cut short
    swarm_service again;
    const auto r = again.restore_from(*store);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message() == "a log record has a truncated event");
    CHECK(again.read([](const shared_economics_state& x) { return x.counters().fingerprints; }) ==
          0);
    CHECK(again.sequences().empty());

    auto unknown = open_ok();
    append_records(*unknown, {"\x09"});
    const auto u = again.restore_from(*unknown);
    REQUIRE_FALSE(u.has_value());
    CHECK(u.error().message() == "a log record has an unknown format (9)");
  }

  TEST_CASE(
      "a kept schema-2 database is migrated to the current schema at open and restores exactly") {
    temp_dir dir;
    const std::string path = dir.file("schema2.db");
    std::filesystem::copy_file(std::string(LOOPGUARD_DAEMON_TEST_DIR) + "/data/schema2.db", path);
    std::size_t blob_bytes = 0;
    {
      SQLite::Database db(path);
      REQUIRE(db.execAndGet("PRAGMA user_version").getInt() == 2);
      blob_bytes =
          std::size_t(db.execAndGet("SELECT sum(length(data)) FROM fingerprints").getInt64());
    }
    // The sequence that wrote it (tests/daemon/data/README.md).
    swarm_service want;
    feed(want, "s1", 30, 1, 0);
    feed(want, "s2", 5, 1, 0);
    feed(want, "s2", 7, 6, 10);
    feed(want, "s3", 12, 1, 100);
    REQUIRE(want.complete("s1").has_value());
    feed(want, "s3", 4, 13, 200);

    {
      auto store = open_ok(path);
      const auto got = load(*store);
      CHECK(got.digest == digest_of(want));
      CHECK(got.records == 2);  // format-1 log records, replayed as they are
      REQUIRE(got.sequences.size() == 9);
      // New work lands in the migrated file (a format-2 record), costs included.
      swarm_service svc;
      REQUIRE(svc.restore_from(*store).has_value());
      std::vector<protocol::event> more{wire_event(17, 1, 300)};
      more[0].spent = {1234, 0.5};
      REQUIRE(svc.ingest({"s3", "w0", "inc"}, more).error.ok());
      REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
      CHECK(load(*store).digest == digest_of(svc));
    }
    SQLite::Database db(path);
    CHECK(db.execAndGet("PRAGMA user_version").getInt() == sqlite_checkpoint_store::kSchemaVersion);
    // Schema 7 moved the rows to the rows file (kept: no compaction ran).
    SQLite::Database rows(path + "-rows");
    const auto fps = std::size_t(rows.execAndGet("SELECT count(*) FROM fingerprints").getInt64());
    CHECK(fps > 0);
    CHECK(std::size_t(rows.execAndGet("SELECT sum(length(data)) FROM fingerprints").getInt64()) ==
          blob_bytes + 32 * fps);
    CHECK(rows.execAndGet("SELECT count(*) FROM fingerprints WHERE typeof(data) != 'blob'")
              .getInt() == 0);
    CHECK(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name IN ('fingerprints', "
                        "'staged')")
              .getInt() == 0);
    CHECK(db.execAndGet("SELECT sum(spent_tokens) FROM swarms").getInt64() == 0);  // compacted rows
    CHECK(db.execAndGet("SELECT count(*) FROM pragma_table_info('swarms') WHERE name = 'handoffs'")
              .getInt() == 1);
  }

  TEST_CASE("older schema versions are refused and left untouched") {
    temp_dir dir;
    const auto path = dir.file("v1.db");
    { auto store = open_ok(path); }
    {
      SQLite::Database db(path, SQLite::OPEN_READWRITE);
      db.exec("PRAGMA user_version = 1");
    }
    const auto before = test::read_bytes(path);
    CHECK(refusal(path).find("schema version 1, which this build no longer reads") !=
          std::string::npos);
    CHECK(test::read_bytes(path) == before);
  }

  TEST_CASE("restore_from streams rows in batches: restore equals the state digest") {
    swarm_rules rules;
    rules.max_fingerprints_per_swarm = 100000;
    swarm_service svc(rules);
    // More rows than one batch, in two swarms, with a log record replayed after them.
    const auto distinct = [&](const std::string& swarm, std::uint64_t n, std::uint64_t first) {
      std::vector<protocol::event> batch;
      for (std::uint64_t i = 0; i < n; ++i) batch.push_back(wire_event(first + i, 10 + i, 1));
      REQUIRE(svc.ingest({swarm, "w0", "inc"}, batch).error.ok());
    };
    distinct("s1", swarm_service::kRestoreBatchRows + 7, 1);
    distinct("s2", swarm_service::kRestoreBatchRows / 2, 1);
    // Every 97th of s1's calls again, by another worker: full rows among the rows called once
    // (the loader decodes every row into one reused row, and moves a full row's stats out).
    std::vector<protocol::event> again_calls;
    for (std::uint64_t fp = 10; fp < 10 + swarm_service::kRestoreBatchRows; fp += 97) {
      again_calls.push_back(wire_event(again_calls.size() + 1, fp, 2));
    }
    REQUIRE(svc.ingest({"s1", "w1", "inc"}, again_calls).error.ok());
    auto store = open_ok();
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint(true)).ok());
    feed(svc, "s3", 3, 1, 5);
    REQUIRE(write_checkpoint(*store, svc.take_checkpoint()).ok());
    swarm_service again(rules);
    const auto r = again.restore_from(*store);
    REQUIRE_MESSAGE(r.has_value(), r.error().message());
    CHECK(r->fingerprints == 3 * swarm_service::kRestoreBatchRows + 14);
    CHECK(r->records == 1);
    CHECK(r->workers == 3);  // s3's workers are in the log
    CHECK(digest_of(again) == digest_of(svc));
    CHECK(again.durable_seq({"s2", "w0", "inc"}) == swarm_service::kRestoreBatchRows / 2);
    CHECK(again.durable_seq({"s3", "w0", "inc"}) == 3);
  }

  TEST_CASE("a malformed fingerprint row after whole batches refuses the restore, state empty") {
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    {
      swarm_rules rules;
      rules.max_fingerprints_per_swarm = 100000;
      swarm_service svc(rules);
      std::vector<protocol::event> batch;
      for (std::uint64_t i = 0; i < 2 * swarm_service::kRestoreBatchRows; ++i) {
        batch.push_back(wire_event(i + 1, 10 + i, 1));
      }
      REQUIRE(svc.ingest({"s1", "w0", "inc"}, batch).error.ok());
      auto store = open_ok(path);
      REQUIRE(write_checkpoint(*store, svc.take_checkpoint(true)).ok());
      // Folded, as the next start would: the rows are stored ones, not the staged overlay.
      const auto generation = store->generation();
      REQUIRE(generation.has_value());
      auto& rows = store->rows();
      REQUIRE(rows.begin().ok());
      REQUIRE(rows.fold_staged(*generation, 1 << 20).has_value());
      REQUIRE(rows.commit().ok());
    }
    {
      // The last row in key order: every batch before it has reached the restoring thread.
      SQLite::Database rows(path + "-rows", SQLite::OPEN_READWRITE);
      REQUIRE(rows.exec("UPDATE fingerprints SET data = x'c0' WHERE fp = (SELECT max(fp) FROM "
                        "fingerprints)") == 1);
    }
    auto store = open_ok(path);
    swarm_service again;
    const auto r = again.restore_from(*store);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message().find("a fingerprint row has a malformed data blob") !=
          std::string::npos);
    CHECK(again.read([](const shared_economics_state& x) { return x.counters().fingerprints; }) ==
          0);
    CHECK(again.sequences().empty());
  }

  TEST_CASE("an in-memory database opens with the schema, without WAL") {
    auto store = open_ok(":memory:");
    swarm_service svc;
    const auto r = svc.restore_from(*store);
    REQUIRE(r.has_value());
    CHECK(r->fingerprints == 0);
    CHECK(r->records == 0);
  }

  TEST_CASE("without quick_check, the restore still refuses corrupted pages") {
    temp_dir dir;
    const auto path = dir.file("corrupt.db");
    swarm_service svc;
    feed(svc, "s1", 200, 1, 0);
    {
      auto store = open_ok(path);
      REQUIRE(write_checkpoint(*store, svc.take_checkpoint(true)).ok());
    }
    auto bytes = test::read_bytes(path);
    for (std::size_t i = 4096 + 100; i < bytes.size(); i += 7) bytes[i] = char(i * 31);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    {
      const auto store = sqlite_checkpoint_store::open(path, {false});
      if (store) {
        swarm_service svc2;
        const auto r = svc2.restore_from(**store);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message().find("loading the checkpoint failed on " + path) !=
              std::string::npos);
        CHECK(svc2.read(
                  [](const shared_economics_state& x) { return x.counters().fingerprints; }) == 0);
      }
    }
    CHECK(test::read_bytes(path) == bytes);
  }
}
