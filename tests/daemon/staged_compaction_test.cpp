// Compaction in chunks (docs/storage.md, "Compaction in chunks"): the group_committer carries a
// compaction one bounded step per group commit. After every commit, failed or not, and after a
// crash at any point, the store restores exactly what was last committed.
#include <doctest/doctest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "fault_injecting_store.hpp"
#include "service/group_committer.hpp"
#include "service/rows_worker.hpp"
#include "service/swarm_service.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "store_util.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::digest_of;
using loopguard::test::load;
using loopguard::test::open_ok;
using loopguard::test::wire_event;

namespace {

// Keeps every seen `seen` equal: restore and the live service must agree on sequences.
std::vector<sequence_row> seqs(const swarm_service& svc) {
  auto rows = svc.sequences();
  for (auto& r : rows) r.seen = 0;
  return rows;
}
std::vector<sequence_row> seqs(std::vector<sequence_row> rows) {
  for (auto& r : rows) r.seen = 0;
  return rows;
}

swarm_rules small_rules() {
  swarm_rules rules;
  rules.max_fingerprints_per_swarm = 16;  // evictions: staged erasures
  return rules;
}

// Round `r` of a workload that changes rows, evicts, completes a swarm and starts new ones.
void round_of_work(swarm_service& svc, int r) {
  const std::string swarm = r % 3 == 0 ? "s1" : (r % 3 == 1 ? "s2" : "gone");
  for (int w = 0; w < 2; ++w) {
    std::vector<protocol::event> batch;
    const worker_identity id{swarm, test::worker_name(w), "inc"};
    std::uint64_t next = 1;
    for (const auto& row : svc.sequences()) {
      if (row.id == id) next = row.seq + 1;
    }
    for (int i = 0; i < 4; ++i) {
      batch.push_back(
          wire_event(next + std::uint64_t(i), std::uint64_t(1 + (r * 4 + i) % 23), r * 10.0 + i));
    }
    REQUIRE(svc.ingest(id, batch).error.ok());
  }
  if (r == 7) REQUIRE(svc.complete("gone").has_value());
}

// Rounds first..first+n-1 of work, each committed as a plain checkpoint (a log record).
void log_rounds(swarm_service& svc, checkpoint_store& store, int first, int n) {
  for (int r = first; r < first + n; ++r) {
    round_of_work(svc, r);
    const auto c = svc.take_checkpoint(false);
    REQUIRE(write_checkpoint(store, c).ok());
    svc.mark_durable(c);
  }
}

// Commits until the compaction begun by then becomes current (its flip).
void commit_until_flip(group_committer& gc) {
  bool flipped = false;
  for (int i = 0; i < 400 && !flipped; ++i) {
    const auto o = gc.commit_once(false);
    REQUIRE(o.result.ok());
    flipped = o.compacted;
  }
  REQUIRE(flipped);
}

}  // namespace

TEST_SUITE("staged_compaction") {
  TEST_CASE("a compaction in chunks: every commit restores exactly, acks commit meanwhile") {
    const swarm_rules rules = small_rules();
    swarm_service svc(rules);
    auto store = open_ok();
    // Compact after every byte of log, 3 rows a step, at most 4 parts taken.
    group_committer gc(svc, *store,
                       {.compact_log_bytes = 1, .take_rows = 3, .max_parts = 4, .job_rows = 3});
    int flips = 0, staging_commits_with_records = 0;
    for (int r = 0; r < 60; ++r) {
      CAPTURE(r);
      round_of_work(svc, r);
      const bool staging = gc.compacting();
      const auto o = gc.commit_once(false);
      REQUIRE_MESSAGE(o.result.ok(), o.result.message());
      if (o.compacted) ++flips;
      if (staging && o.wrote) ++staging_commits_with_records;
      const auto got = load(*store, rules);
      CHECK(got.digest == digest_of(svc));
      CHECK(seqs(got.sequences) == seqs(svc));
    }
    CHECK(flips >= 1);
    CHECK(staging_commits_with_records > 10);
    while (gc.compacting()) REQUIRE(gc.commit_once(false).result.ok());
    CHECK(load(*store, rules).digest == digest_of(svc));

    SUBCASE("the final commit is one whole compaction, covering the one in progress") {
      round_of_work(svc, 41);
      // Its record puts the log past 1 byte (unless records after the last take did): the
      // next commit begins a compaction.
      REQUIRE(gc.commit_once(false).result.ok());
      if (!gc.compacting()) REQUIRE(gc.commit_once(false).result.ok());
      REQUIRE(gc.compacting());
      round_of_work(svc, 42);
      const auto o = gc.commit_once(true);
      REQUIRE(o.result.ok());
      CHECK(o.compacted);
      CHECK_FALSE(gc.compacting());
      const auto got = load(*store, rules);
      CHECK(got.digest == digest_of(svc));
      CHECK(got.records == 0);
    }
  }

  TEST_CASE("fault injection: a compaction in chunks failing at any step loses nothing") {
    // Fail step N (1, 2, ... until none is left) of a workload whose commits stage, flip and
    // fold: every commit, failed or not, leaves the store restoring the last committed state;
    // the failed one is retried merged with the next, as the checkpointer does.
    const swarm_rules rules = small_rules();
    std::size_t n = 1;
    for (;; ++n) {
      CAPTURE(n);
      swarm_service svc(rules);
      auto store = open_ok();
      fault_injecting_store faulty(*store);
      group_committer gc(svc, faulty,
                         {.compact_log_bytes = 1, .take_rows = 3, .max_parts = 4, .job_rows = 12});
      faulty.fail_at(n);
      std::uint64_t durable = load(*store, rules).digest;
      for (int r = 0; r < 16; ++r) {
        round_of_work(svc, r);
        const auto o = gc.commit_once(false);
        if (o.result.ok()) {
          durable = digest_of(svc);
        } else {
          CHECK(o.result.message() == "injected fault at step " + std::to_string(n));
        }
        REQUIRE(load(*store, rules).digest == durable);
      }
      // Drain: the last compaction flips and folds (the fault may fall here too).
      for (int i = 0; i < 400; ++i) {
        const auto o = gc.commit_once(false);
        if (o.result.ok()) durable = digest_of(svc);
        REQUIRE(load(*store, rules).digest == durable);
        if (o.result.ok() && !gc.compacting()) break;
      }
      CHECK_FALSE(gc.compacting());
      CHECK(load(*store, rules).digest == digest_of(svc));
      if (!faulty.failed()) break;
    }
    // Every take, stage, flip, fold and trim step of the workload was failed once (~290 steps;
    // jobs of 12 rows: with 3, ~420 steps made this test 14 s here, past the sanitizer stage's
    // timeout there).
    CHECK(n > 100);
  }

  TEST_CASE("a crash while rows are staged, or after the flip before the fold, loses nothing") {
    const swarm_rules rules = small_rules();
    for (const bool after_flip : {false, true}) {
      CAPTURE(after_flip);
      test::temp_dir dir;
      const std::string path = dir.file("crash.db");
      std::uint64_t digest = 0;
      std::vector<sequence_row> sequences;
      {
        swarm_service svc(rules);
        auto store = open_ok(path);
        group_committer gc(
            svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 4, .job_rows = 32});
        for (int r = 0; r < 3; ++r) {
          round_of_work(svc, r);
          REQUIRE(gc.commit_once(false).result.ok());
        }
        // A compaction is taking its parts now; stop at the commit that took its last part (its
        // first job of 32 rows is staged by then, with the inline worker), or right after its
        // flip.
        int staged_chunks = -1;
        for (int steps = 0; steps < 200; ++steps) {
          round_of_work(svc, 3 + steps);
          const auto o = gc.commit_once(false);
          REQUIRE(o.result.ok());
          if (o.began_rows) staged_chunks = 0;
          if (staged_chunks >= 0 && ++staged_chunks == 1 && !after_flip) break;
          if (after_flip && o.compacted) break;
        }
        REQUIRE(gc.compacting());
        digest = digest_of(svc);
        sequences = seqs(svc);
      }  // the process dies here: every commit was durable, nothing else is written
      std::int64_t staged = 0, generation = 0;
      {
        SQLite::Database db(path);
        generation = db.execAndGet("SELECT generation FROM compaction").getInt64();
        SQLite::Database rows(path + "-rows");
        staged = rows.execAndGet("SELECT count(*) FROM staged").getInt64();
      }
      CHECK(staged > 0);
      CHECK(generation == (after_flip ? 1 : 0));
      auto store = open_ok(path);
      const auto got = load(*store, rules);
      CHECK(got.digest == digest);
      CHECK(seqs(got.sequences) == sequences);
      // The next start folds (or drops) what was staged, then compacts again from scratch.
      swarm_service svc(rules);
      REQUIRE(svc.restore_from(*store).has_value());
      group_committer gc(svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 4});
      bool flipped = false;
      for (int i = 0; i < 400 && !(flipped && !gc.compacting()); ++i) {
        const auto o = gc.commit_once(false);
        REQUIRE(o.result.ok());
        flipped = flipped || o.compacted;
      }
      CHECK(flipped);
      CHECK(load(*store, rules).digest == digest);
      store.reset();
      SQLite::Database db(path);
      CHECK(SQLite::Database(path + "-rows").execAndGet("SELECT count(*) FROM staged").getInt64() ==
            0);
      CHECK(db.execAndGet("SELECT generation FROM compaction").getInt64() == generation + 1);
    }
  }

  TEST_CASE("the flip keeps the covered log, the fold steps delete it a bounded part at a time") {
    // Schema 6: the flip records its boundary as the log's floor instead of deleting ~1M events
    // of log in one commit; restores skip the records at or below it, and each fold step
    // deletes some (2 rows a step here: 2 KiB of records, at least one).
    const swarm_rules rules = small_rules();
    test::temp_dir dir;
    const std::string path = dir.file("trim.db");
    const auto covered = [&] {
      SQLite::Database db(path);
      return db
          .execAndGet("SELECT count(*) FROM log WHERE id <= (SELECT log_floor FROM compaction)")
          .getInt64();
    };
    const auto floor = [&] {
      SQLite::Database db(path);
      return db.execAndGet("SELECT log_floor FROM compaction").getInt64();
    };
    swarm_service svc(rules);
    auto store = open_ok(path);
    group_committer gc(svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 4});
    // 12 records of log, then a compaction begins (the log is past 1 byte) with no new work:
    // its boundary is the last record.
    log_rounds(svc, *store, 0, 12);
    commit_until_flip(gc);
    store.reset();  // the file is read by another connection below: the lock is exclusive
    CHECK(floor() >= 12);
    std::int64_t left = covered();
    CHECK(left >= 12);  // nothing deleted by the flip
    store = open_ok(path);
    CHECK(load(*store, rules).digest == digest_of(svc));
    CHECK(load(*store, rules).records == 0);  // every record is covered: none replayed
    // The fold steps trim: a few records per commit, never all at once, each commit restoring.
    // (A committer per commit: another connection reads the file between them.)
    std::vector<std::int64_t> sizes;  // of the covered records, oldest first
    store.reset();
    {
      SQLite::Database db(path);
      SQLite::Statement st(
          db,
          "SELECT length(data) FROM log WHERE id <= (SELECT log_floor FROM compaction) "
          "ORDER BY id");
      while (st.executeStep()) sizes.push_back(st.getColumn(0).getInt64());
    }
    REQUIRE(static_cast<std::int64_t>(sizes.size()) == left);
    int trimming_commits = 0;
    for (int i = 0; i < 100; ++i) {
      store = open_ok(path);
      group_committer step(svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 4});
      const auto o = step.commit_once(false);  // no record: a full step, 2 rows and 2 KiB
      REQUIRE(o.result.ok());
      CHECK(load(*store, rules).digest == digest_of(svc));
      const bool more = step.compacting();
      store.reset();
      const std::int64_t now = covered();
      REQUIRE(now <= left);
      if (now < left) {
        ++trimming_commits;
        // Deleted: the oldest records, up to 2 KiB, the last one may cross it.
        std::int64_t before_last = 0;
        const auto first = sizes.size() - static_cast<std::size_t>(left);
        const auto last = sizes.size() - static_cast<std::size_t>(now) - 1;
        for (auto k = first; k < last; ++k) before_last += sizes[k];
        CHECK(before_last < 2048);
      }
      left = now;
      if (!more) break;
    }
    CHECK(left == 0);
    CHECK(trimming_commits >= 3);
    {
      SQLite::Database db(path);
      CHECK(db.execAndGet("SELECT count(*) FROM log").getInt64() == 0);
    }
    // The log is empty and the floor is not 0: the next record must still be numbered above
    // the floor (SQLite would number it 1, and a restore would skip it).
    store = open_ok(path);
    group_committer gc3(svc, *store, {.compact_log_bytes = std::size_t{1} << 30});
    round_of_work(svc, 12);
    REQUIRE(gc3.commit_once(false).result.ok());
    const auto got = load(*store, rules);
    CHECK(got.records == 1);
    CHECK(got.digest == digest_of(svc));
    store.reset();
    SQLite::Database db(path);
    CHECK(db.execAndGet("SELECT min(id) FROM log").getInt64() > floor());
  }

  TEST_CASE("once a trim finds nothing more, the commits skip it until the next flip") {
    // ~800 rows staged, folded 32 a job (one job per commit), and ~12 KiB of covered log
    // trimmed 2 KiB a commit: the trim is done before the fold, and the commits after it while
    // the fold goes on run no trim query.
    swarm_rules rules;
    rules.max_fingerprints_per_swarm = 10000;
    swarm_service svc(rules);
    auto sqlite = open_ok();
    fault_injecting_store store(*sqlite);
    group_committer gc(svc, store,
                       {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 4, .job_rows = 32});
    for (int compaction = 0; compaction < 2; ++compaction) {
      CAPTURE(compaction);
      log_rounds(svc, store, compaction * 12, 12);
      std::vector<protocol::event> many;  // 400 new fingerprints in one record
      for (int i = 0; i < 200; ++i) {
        many.push_back(wire_event(std::uint64_t(1 + i), std::uint64_t(1000 * (compaction + 1) + i),
                                  1000.0 + i));
      }
      REQUIRE(svc.ingest({"many" + std::to_string(compaction), "w", "inc"}, many).error.ok());
      const auto c = svc.take_checkpoint(false);
      REQUIRE(write_checkpoint(store, c).ok());
      svc.mark_durable(c);
      commit_until_flip(gc);
      const std::size_t before = store.trims().size();
      int fold_commits = 0;
      while (gc.compacting()) {
        REQUIRE(gc.commit_once(false).result.ok());
        REQUIRE(++fold_commits < 100);
      }
      const std::vector<bool> during(store.trims().begin() + static_cast<std::ptrdiff_t>(before),
                                     store.trims().end());
      REQUIRE(!during.empty());
      // Every trim but the last found more; the last found none; then no trim ran.
      CHECK(std::count(during.begin(), during.end(), false) == 1);
      CHECK(during.back() == false);
      CHECK(during.size() < static_cast<std::size_t>(fold_commits));
      CHECK(load(*sqlite, rules).digest == digest_of(svc));
    }
  }

  TEST_CASE("under steady churn the parts take about the state once, not max_parts of copies") {
    // Every commit of the take phase follows more work on the same fingerprints, so the changed
    // set never empties and each part re-takes rows taken before. 2 rows a part, up to 64
    // parts: without a bound the parts would copy ~128 rows of a state that holds at most 48.
    const swarm_rules rules = small_rules();
    const std::size_t most_held = 3 * rules.max_fingerprints_per_swarm;  // swarms s1, s2, gone
    swarm_service svc(rules);
    auto store = open_ok();
    group_committer gc(svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 64});
    std::optional<std::size_t> began;
    for (int r = 0; r < 400 && !began; ++r) {
      round_of_work(svc, r);
      const auto o = gc.commit_once(false);
      REQUIRE(o.result.ok());
      if (o.began_rows) began = *o.began_rows;
    }
    REQUIRE(began.has_value());
    CHECK(*began <= 2 * most_held + 2);  // the parts up to the state's size, then the rest whole
    for (int i = 0; i < 400 && gc.compacting(); ++i) REQUIRE(gc.commit_once(false).result.ok());
    CHECK_FALSE(gc.compacting());
    CHECK(load(*store, rules).digest == digest_of(svc));
  }

  TEST_CASE("while the store cannot read the generation, the take reports it and retries later") {
    // Regression: the take's last step swallowed the error and took one more part at every
    // commit, which the checkpointer made at once (a compaction's main step was pending).
    const swarm_rules rules = small_rules();
    swarm_service svc(rules);
    auto store = open_ok();
    fault_injecting_store faulty(*store);
    group_committer gc(svc, faulty, {.compact_log_bytes = 1, .take_rows = 2, .max_parts = 64});
    // A committer starts by folding what a previous run left (which reads the generation too).
    for (int i = 0; i < 10 && gc.compacting(); ++i) REQUIRE(gc.commit_once(false).result.ok());
    REQUIRE_FALSE(gc.compacting());
    faulty.fail_generation(3);
    const std::size_t reads_before = faulty.generation_reads();
    std::optional<std::size_t> began;
    int reported = 0;
    bool waited = false;  // a commit while the retry waits is not a main step
    for (int r = 0; r < 2000 && !began; ++r) {
      round_of_work(svc, r);  // churn
      const auto o = gc.commit_once(false);
      REQUIRE(o.result.ok());  // the acks' commits go on
      if (!o.compaction_error.ok()) {
        ++reported;
        CHECK(o.compaction_error.message() == "injected fault reading the generation");
      }
      if (reported == 2 && !gc.main_step_pending()) waited = true;
      if (o.began_rows) began = *o.began_rows;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(began.has_value());
    CHECK(reported == 3);
    CHECK(waited);
    // Three failed reads and the one that succeeded: none while a retry waited (0.1 s, 0.2 s).
    CHECK(faulty.generation_reads() - reads_before == 4);
    for (int i = 0; i < 400 && gc.compacting(); ++i) REQUIRE(gc.commit_once(false).result.ok());
    CHECK_FALSE(gc.compacting());
    CHECK(load(*store, rules).digest == digest_of(svc));
  }

  TEST_CASE("rows are staged in the key order of the rows, a job of 32 per commit here") {
    // 2 rows a part, 32 rows a job of the rows file, one job per commit with the inline
    // worker.
    swarm_rules rules;
    rules.max_fingerprints_per_swarm = 1000;
    test::temp_dir dir;
    const std::string path = dir.file("order.db");
    std::uint64_t digest = 0;
    const auto work = [](swarm_service& svc, const std::string& swarm, std::uint64_t from,
                         int calls) {
      std::vector<protocol::event> batch;
      for (int i = 0; i < calls; ++i) {
        // Scattered keys: the change set comes out of a hash map in no particular order.
        batch.push_back(wire_event(from + std::uint64_t(i),
                                   (std::uint64_t(i) * 0x9E3779B97F4A7C15ULL) >> 1, i * 1.0));
      }
      REQUIRE(svc.ingest({swarm, "w", "inc"}, batch).error.ok());
    };
    {
      swarm_service svc(rules);
      auto store = open_ok(path);
      group_committer gc(svc, *store, {.compact_log_bytes = 1, .take_rows = 2, .job_rows = 32});
      work(svc, "b", 1, 100);
      work(svc, "a", 1, 100);
      REQUIRE(gc.commit_once(false).result.ok());  // the log record; the compaction is due
      bool began = false;
      for (int i = 0; i < 400 && !began; ++i) {
        const auto o = gc.commit_once(false);  // take the parts
        REQUIRE(o.result.ok());
        began = o.began_rows.has_value();
        if (began) CHECK(*o.began_rows == 400);  // 200 calls: exact and structural rows
      }
      REQUIRE(began);                              // and staged 32 rows
      REQUIRE(gc.commit_once(false).result.ok());  // 32 more
      work(svc, "a", 101, 1);
      REQUIRE(gc.commit_once(false).result.ok());  // 32 more, beside a log record
      digest = digest_of(svc);
    }  // a crash while staging
    std::vector<std::tuple<std::string, int, std::int64_t>> staged;
    {
      SQLite::Database db(path + "-rows");
      SQLite::Statement st(db, "SELECT swarm, kind, fp FROM staged ORDER BY id");
      while (st.executeStep()) {
        staged.emplace_back(st.getColumn(0).getString(), st.getColumn(1).getInt(),
                            st.getColumn(2).getInt64());
      }
    }
    CHECK(staged.size() == 3 * 32);
    CHECK(std::is_sorted(staged.begin(), staged.end()));  // SQLite's order of the primary key
    CHECK(std::adjacent_find(staged.begin(), staged.end()) == staged.end());
    CHECK(std::get<0>(staged.front()) == "a");
    auto store = open_ok(path);
    CHECK(load(*store, rules).digest == digest);
  }

  TEST_CASE("thread_rows_worker: one job at a time, its result taken once, done after each") {
    std::atomic<int> done{0};
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    {
      thread_rows_worker worker([&] { ++done; });
      CHECK_FALSE(worker.busy());
      CHECK_FALSE(worker.take_result().has_value());
      worker.post([&] {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return release; });
        return rows_job_result{{}, 7};
      });
      CHECK(worker.busy());
      CHECK_FALSE(worker.take_result().has_value());  // still running
      {
        std::lock_guard lock(mu);
        release = true;
      }
      cv.notify_all();
      worker.wait();
      CHECK(worker.busy());  // finished, its result not yet taken
      const auto r = worker.take_result();
      REQUIRE(r.has_value());
      CHECK(r->result.ok());
      CHECK(r->folded == 7);
      CHECK_FALSE(worker.busy());
      CHECK_FALSE(worker.take_result().has_value());
      worker.post([] { return rows_job_result{status::error("disk full"), 0}; });
      worker.wait();
      const auto failed = worker.take_result();
      REQUIRE(failed.has_value());
      CHECK(failed->result.message() == "disk full");
      // A job posted just before the worker is destroyed still runs: its owner's data is alive.
      worker.post([] { return rows_job_result{{}, 1}; });
    }
    CHECK(done == 3);
  }

  TEST_CASE("thread_rows_worker: what a job owns is freed on its thread, outside its lock") {
    // A flipped change set rides with the next job so that the checkpointer does not spend
    // ~40 ms freeing it (group_committer::retired_). Freed under the worker's lock, it would
    // block busy() and take_result() for as long. The destructor asks them from another thread
    // and waits a bounded time, so that a regression fails instead of hanging.
    struct seen_at_free {
      std::thread::id thread;
      std::future<std::pair<bool, bool>> asked;  // busy(), a result already there
      bool answered = false;                     // within the bound, during the free
    };
    struct owned {
      thread_rows_worker* worker = nullptr;
      seen_at_free* seen = nullptr;
      ~owned() {
        if (worker == nullptr) return;
        seen->thread = std::this_thread::get_id();
        seen->asked = std::async(std::launch::async, [w = worker] {
          return std::pair{w->busy(), w->take_result().has_value()};
        });
        seen->answered = seen->asked.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
      }
    };
    seen_at_free seen;
    thread_rows_worker worker({});
    auto held = std::make_shared<owned>();
    held->worker = &worker;
    held->seen = &seen;
    worker.post([held = std::move(held)] { return rows_job_result{{}, 0}; });
    worker.wait();
    CHECK(seen.thread != std::thread::id{});
    CHECK(seen.thread != std::this_thread::get_id());
    REQUIRE(seen.asked.valid());
    REQUIRE(seen.answered);  // while the job was being freed: the lock was free then
    const auto [busy, had_result] = seen.asked.get();
    CHECK(busy);              // the job still counted as running
    CHECK_FALSE(had_result);  // its result not yet published
    REQUIRE(worker.take_result().has_value());
  }

  TEST_CASE("a compaction through the threaded worker restores exactly after every commit") {
    const swarm_rules rules = small_rules();
    swarm_service svc(rules);
    auto store = open_ok();
    std::atomic<int> jobs{0};
    thread_rows_worker worker([&] { ++jobs; });
    group_committer gc(svc, *store,
                       {.compact_log_bytes = 1, .take_rows = 3, .max_parts = 4, .job_rows = 3},
                       &worker);
    int flips = 0;
    bool flipped = false;  // the last commit was a flip
    const auto check = [&] {
      worker.wait();  // the restore reads the rows file on this thread
      CHECK(load(*store, rules).digest == digest_of(svc));
    };
    for (int r = 0; r < 40; ++r) {
      CAPTURE(r);
      round_of_work(svc, r);
      const auto o = gc.commit_once(false);
      REQUIRE_MESSAGE(o.result.ok(), o.result.message());
      REQUIRE(o.compaction_error.ok());
      // The flip keeps its change set for the next job, whose capture frees it on the worker.
      if (flipped) CHECK(gc.retired_parts() == 0);
      flipped = o.compacted;
      if (o.compacted) {
        ++flips;
        CHECK(gc.retired_parts() > 0);
      }
      check();
    }
    for (int i = 0; i < 4000 && gc.compacting(); ++i) {
      worker.wait();
      const auto o = gc.commit_once(false);
      REQUIRE(o.result.ok());
      if (flipped) CHECK(gc.retired_parts() == 0);
      flipped = o.compacted;
      if (o.compacted) {
        ++flips;
        CHECK(gc.retired_parts() > 0);
      }
    }
    CHECK_FALSE(gc.compacting());
    CHECK(flips >= 2);
    CHECK(jobs > 10);
    check();
    // The final commit waits for a job in flight, then compacts whole.
    round_of_work(svc, 41);
    REQUIRE(gc.commit_once(false).result.ok());
    round_of_work(svc, 42);
    const auto o = gc.commit_once(true);
    REQUIRE(o.result.ok());
    CHECK(o.compacted);
    const auto got = load(*store, rules);
    CHECK(got.digest == digest_of(svc));
    CHECK(got.records == 0);
  }
}
