// The rows file beside the main file (docs/storage.md, "Files"): created with a new database and
// paired with it; a missing one, one of another database, or one given as the main file is
// refused, naming the file, and both files are left as they were.
#include <doctest/doctest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>

#include "service/swarm_service.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "store/sqlite_rows_store.hpp"
#include "store_util.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::digest_of;
using loopguard::test::open_ok;
using loopguard::test::read_bytes;
using loopguard::test::refusal;
using loopguard::test::temp_dir;
using loopguard::test::wire_event;

namespace {

// A database at `path` holding compacted rows of one swarm; returns its digest.
std::uint64_t write_rows(const std::string& path, const std::string& swarm) {
  swarm_service svc;
  std::vector<protocol::event> batch;
  for (std::uint64_t i = 1; i <= 6; ++i) batch.push_back(wire_event(i, i % 3, double(i)));
  REQUIRE(svc.ingest({swarm, "w0", "inc"}, batch).error.ok());
  auto store = open_ok(path);
  REQUIRE(write_checkpoint(*store, svc.take_checkpoint(true)).ok());
  return digest_of(svc);
}

std::int64_t one(const std::string& path, const std::string& sql) {
  SQLite::Database db(path);
  return db.execAndGet(sql).getInt64();
}

}  // namespace

TEST_SUITE("rows_file") {
  TEST_CASE("a new database gets its rows file, paired with it, each with its own application id") {
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    const std::uint64_t digest = write_rows(path, "s");
    const std::string rows = sqlite_rows_store::path_for(path);
    CHECK(rows == path + "-rows");
    CHECK(one(path, "PRAGMA user_version") == sqlite_checkpoint_store::kSchemaVersion);
    CHECK(one(rows, "PRAGMA user_version") == sqlite_rows_store::kSchemaVersion);
    CHECK(one(path, "PRAGMA application_id") == sqlite_checkpoint_store::kApplicationId);
    CHECK(one(rows, "PRAGMA application_id") == 0x4C47524F);
    const std::int64_t pair = one(path, "SELECT pair FROM compaction");
    CHECK(pair > 0);
    CHECK(one(rows, "SELECT main FROM pair") == pair);
    // The rows are in the rows file, staged as generation 1, which the main file made current
    // (a whole compaction leaves the fold to the group committer); the main file has no such
    // table.
    CHECK(one(rows, "SELECT count(*) FROM staged WHERE generation = 1") == 6);
    CHECK(one(rows, "SELECT count(*) FROM fingerprints") == 0);
    CHECK(one(path, "SELECT generation FROM compaction") == 1);
    CHECK(one(path, "SELECT count(*) FROM sqlite_master WHERE name = 'fingerprints'") == 0);
    auto store = open_ok(path);
    swarm_service again;
    REQUIRE(again.restore_from(*store).has_value());
    CHECK(digest_of(again) == digest);
  }

  TEST_CASE("a missing rows file is refused, naming it, and the main file is left untouched") {
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    write_rows(path, "s");
    std::filesystem::remove(path + "-rows");
    const std::string before = read_bytes(path);
    const std::string why = refusal(path);
    CHECK(why == "refusing " + path + ": " + path +
                     "-rows is missing: it holds this database's fingerprint rows (a backup or a "
                     "copy takes both files); the file was not modified");
    CHECK(read_bytes(path) == before);
    CHECK_FALSE(std::filesystem::exists(path + "-rows"));  // not recreated empty
  }

  TEST_CASE("a rows file of another database is refused, and both files are left untouched") {
    temp_dir dir;
    const std::string a = dir.file("a.db"), b = dir.file("b.db");
    write_rows(a, "sa");
    write_rows(b, "sb");
    std::filesystem::copy_file(b + "-rows", a + "-rows",
                               std::filesystem::copy_options::overwrite_existing);
    const std::string main_before = read_bytes(a), rows_before = read_bytes(a + "-rows");
    CHECK(refusal(a) == "refusing " + a +
                            "-rows: it belongs to another database (its pair id is not the main "
                            "file's); the file was not modified");
    CHECK(read_bytes(a) == main_before);
    CHECK(read_bytes(a + "-rows") == rows_before);
  }

  TEST_CASE("the rows file named as the database is refused") {
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    write_rows(path, "s");
    const std::string before = read_bytes(path + "-rows");
    const std::string why = refusal(path + "-rows");
    CHECK(why.find("it is the rows file of a loopguard database") != std::string::npos);
    CHECK(why.find(path + "-rows") != std::string::npos);
    CHECK(read_bytes(path + "-rows") == before);
  }

  TEST_CASE("a new main file beside a rows file is refused, naming it") {
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    write_rows(path, "s");
    // The main file is gone (deleted by hand): its rows must not be taken for a new database's.
    std::filesystem::remove(path);
    const std::string rows_before = read_bytes(path + "-rows");
    const std::string why = refusal(path);
    CHECK(why == "refusing " + path + ": it is new, but " + path +
                     "-rows beside it belongs to another database (whose main file is gone); "
                     "move that file away, or restore the main file it belongs to; the file was "
                     "not modified");
    CHECK(read_bytes(path + "-rows") == rows_before);
  }

  TEST_CASE("a main file whose rows file was never made gets one, replacing a leftover") {
    // A crash right after a new main file's schema committed leaves its pair id 0 (the rows
    // file is made next); a rows file found then is a leftover of that start and is replaced.
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    open_ok(path).reset();
    { SQLite::Database(path, SQLite::OPEN_READWRITE).exec("UPDATE compaction SET pair = 0"); }
    std::filesystem::remove(path + "-rows");
    {
      auto leftover = sqlite_rows_store::create(path + "-rows", 777);
      REQUIRE(leftover.has_value());
    }
    open_ok(path).reset();
    const std::int64_t pair = one(path, "SELECT pair FROM compaction");
    CHECK(pair != 0);
    CHECK(pair != 777);
    CHECK(one(path + "-rows", "SELECT main FROM pair") == pair);
    // And without any rows file.
    { SQLite::Database(path, SQLite::OPEN_READWRITE).exec("UPDATE compaction SET pair = 0"); }
    std::filesystem::remove(path + "-rows");
    open_ok(path).reset();
    CHECK(one(path + "-rows", "SELECT main FROM pair") == one(path, "SELECT pair FROM compaction"));
  }

  TEST_CASE("a rows file of another schema version is refused") {
    temp_dir dir;
    const std::string path = dir.file("lg.db");
    write_rows(path, "s");
    { SQLite::Database(path + "-rows", SQLite::OPEN_READWRITE).exec("PRAGMA user_version = 8"); }
    CHECK(refusal(path) == "refusing " + path +
                               "-rows: its schema version is 8 (this build reads rows files of "
                               "version 7); the file was not modified");
  }
}
