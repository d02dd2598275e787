#include "store/sqlite_checkpoint_store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include "store/fingerprint_codec.hpp"
#include "store/sqlite_file.hpp"
#include "store/sqlite_rows_store.hpp"

#include <filesystem>
#include <optional>
#include <random>

namespace loopguard::daemon {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE swarms (
  swarm          TEXT PRIMARY KEY,
  latest_t       REAL NOT NULL,
  spent_tokens   INTEGER NOT NULL DEFAULT 0,
  spent_amount   REAL NOT NULL DEFAULT 0,
  wasted_tokens  INTEGER NOT NULL DEFAULT 0,
  wasted_amount  REAL NOT NULL DEFAULT 0,
  handoffs       BLOB,
  expired        REAL
) WITHOUT ROWID;
CREATE TABLE workers (
  swarm TEXT NOT NULL,
  id    INTEGER NOT NULL,
  name  TEXT NOT NULL,
  PRIMARY KEY (swarm, id)
) WITHOUT ROWID;
CREATE TABLE log (
  id   INTEGER PRIMARY KEY,
  data BLOB NOT NULL
);
CREATE TABLE sequences (
  swarm       TEXT NOT NULL,
  worker      TEXT NOT NULL,
  incarnation TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  seen        REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (swarm, worker, incarnation)
) WITHOUT ROWID;
CREATE TABLE swarm_seen (
  swarm TEXT PRIMARY KEY,
  seen  REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE expired_incarnations (
  swarm       TEXT NOT NULL,
  worker      TEXT NOT NULL,
  incarnation TEXT NOT NULL,
  expired     REAL NOT NULL,
  PRIMARY KEY (swarm, worker, incarnation)
) WITHOUT ROWID;
CREATE TABLE compaction (
  id         INTEGER PRIMARY KEY CHECK (id = 0),
  generation INTEGER NOT NULL,
  log_floor  INTEGER NOT NULL DEFAULT 0,
  pair       INTEGER NOT NULL DEFAULT 0
);
)sql";

// Schema 2 -> 3 (docs/storage.md, "Migrations"): the swarms' cost and hand-off columns, and every
// fingerprint blob gains its wasted and booked costs (tokens u64, amount f64 each), zero.
constexpr const char* kMigrate2To3 = R"sql(
ALTER TABLE swarms ADD COLUMN spent_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE swarms ADD COLUMN spent_amount REAL NOT NULL DEFAULT 0;
ALTER TABLE swarms ADD COLUMN wasted_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE swarms ADD COLUMN wasted_amount REAL NOT NULL DEFAULT 0;
ALTER TABLE swarms ADD COLUMN handoffs BLOB;
UPDATE fingerprints SET data = CAST(data || zeroblob(32) AS BLOB);
)sql";

// Schema 3 -> 4 (docs/storage.md, "Migrations"): retention. Nothing is rewritten: a sequence row's
// last activity is unknown (0, counted from the first start on schema 4), every swarm is live.
constexpr const char* kMigrate3To4 = R"sql(
ALTER TABLE swarms ADD COLUMN expired REAL;
ALTER TABLE sequences ADD COLUMN seen REAL NOT NULL DEFAULT 0;
CREATE TABLE swarm_seen (
  swarm TEXT PRIMARY KEY,
  seen  REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE expired_incarnations (
  swarm       TEXT NOT NULL,
  worker      TEXT NOT NULL,
  incarnation TEXT NOT NULL,
  expired     REAL NOT NULL,
  PRIMARY KEY (swarm, worker, incarnation)
) WITHOUT ROWID;
)sql";

// Schema 4 -> 5 (docs/storage.md, "Migrations"): compaction in chunks. The staged table starts
// empty and the current generation is 0; no row is rewritten.
constexpr const char* kMigrate4To5 = R"sql(
CREATE TABLE staged (
  id         INTEGER PRIMARY KEY,
  generation INTEGER NOT NULL,
  swarm      TEXT NOT NULL,
  kind       INTEGER NOT NULL,
  fp         INTEGER NOT NULL,
  data       BLOB
);
CREATE TABLE compaction (
  id         INTEGER PRIMARY KEY CHECK (id = 0),
  generation INTEGER NOT NULL
);
INSERT INTO compaction VALUES (0, 0);
)sql";

// Schema 5 -> 6 (docs/storage.md, "Migrations"): the log's floor. A schema-5 flip deleted the
// records it covered, so every record left is above the boundary: the floor starts at 0.
constexpr const char* kMigrate5To6 = R"sql(
ALTER TABLE compaction ADD COLUMN log_floor INTEGER NOT NULL DEFAULT 0;
)sql";

// Schema 6 -> 7 (docs/storage.md, "Migrations"): the fingerprint rows and the staged rows move
// to the rows file (migrate_rows_out), then leave the main file with this, with the record of
// the migration; the pair id binding the two files is set after it.
constexpr const char* kMigrate6To7 = R"sql(
DROP TABLE fingerprints;
DROP TABLE staged;
DROP TABLE migrating;
ALTER TABLE compaction ADD COLUMN pair INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr int kCacheKiB = 32 * 1024;     // serving: group commits append to the log
constexpr int kLoadCacheKiB = 8 * 1024;  // for loading: it reads every page once
constexpr int kWalAutocheckpointPages = 1024;
constexpr int kRowsApplicationId = 0x4C47524F;  // sqlite_rows_store's

using sqlite_file::as_int;
using sqlite_file::as_uint;
using sqlite_file::bind_blob;
using sqlite_file::blob_of;
using sqlite_file::guarded;
using sqlite_file::refusal;

}  // namespace

struct sqlite_checkpoint_store::impl {
  // One thread at a time uses the connection (the store is not thread-safe): no SQLite mutex.
  explicit impl(const std::string& path)
      : db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX) {}
  SQLite::Database db;
  std::unique_ptr<sqlite_rows_store> rows;  // the rows file beside it
  std::optional<SQLite::Statement> clear_swarms, clear_workers, put_swarm, put_worker, put_seq,
      truncate_log, append_log, erase_seq, put_seen, put_expired, erase_expired, erase_swarm_seen,
      put_swarm_seen, log_end, flip, trim_select, trim_delete, generation;
  std::string scratch;  // the fingerprint blob being written
  sqlite_file::transaction tx;

  void prepare() {
    clear_swarms.emplace(db, "DELETE FROM swarms WHERE swarm = ?");
    clear_workers.emplace(db, "DELETE FROM workers WHERE swarm = ?");
    put_swarm.emplace(db,
                      "INSERT OR REPLACE INTO swarms (swarm, latest_t, spent_tokens, spent_amount, "
                      "wasted_tokens, wasted_amount, handoffs, expired) VALUES (?, ?, ?, ?, ?, "
                      "?, ?, ?)");
    put_worker.emplace(db, "INSERT OR REPLACE INTO workers VALUES (?, ?, ?)");
    put_seq.emplace(db, "INSERT OR REPLACE INTO sequences VALUES (?, ?, ?, ?, ?)");
    erase_seq.emplace(db,
                      "DELETE FROM sequences WHERE swarm = ? AND worker = ? AND incarnation = ?");
    put_seen.emplace(
        db, "UPDATE sequences SET seen = ? WHERE swarm = ? AND worker = ? AND incarnation = ?");
    put_expired.emplace(db, "INSERT OR REPLACE INTO expired_incarnations VALUES (?, ?, ?, ?)");
    erase_expired.emplace(
        db, "DELETE FROM expired_incarnations WHERE swarm = ? AND worker = ? AND incarnation = ?");
    erase_swarm_seen.emplace(db, "DELETE FROM swarm_seen WHERE swarm = ?");
    put_swarm_seen.emplace(db, "INSERT OR REPLACE INTO swarm_seen VALUES (?, ?)");
    truncate_log.emplace(db, "DELETE FROM log");
    // Ids only grow, above the floor too: SQLite would number a record in an emptied table 1.
    append_log.emplace(db,
                       "INSERT INTO log (id, data) SELECT max(coalesce((SELECT max(id) FROM log), "
                       "0), log_floor) + 1, ? FROM compaction WHERE id = 0");
    log_end.emplace(db,
                    "SELECT max(coalesce((SELECT max(id) FROM log), 0), log_floor) FROM "
                    "compaction WHERE id = 0");
    flip.emplace(db, "UPDATE compaction SET generation = ?, log_floor = ? WHERE id = 0");
    // length() of a blob reads its size from the record header, not its overflow pages.
    trim_select.emplace(db,
                        "SELECT id, length(data) FROM log WHERE id <= (SELECT log_floor FROM "
                        "compaction WHERE id = 0) ORDER BY id");
    trim_delete.emplace(db, "DELETE FROM log WHERE id <= ?");
    generation.emplace(db, "SELECT generation FROM compaction WHERE id = 0");
  }
};

namespace {

// A new main file's schema; its pair id is 0 until its rows file is made (open()).
void create_schema(SQLite::Database& db) {
  SQLite::Transaction tx(db);
  db.exec(kSchema);
  db.exec("INSERT INTO compaction (id, generation, log_floor, pair) VALUES (0, 0, 0, 0)");
  db.exec("PRAGMA application_id = " + std::to_string(sqlite_checkpoint_store::kApplicationId));
  db.exec("PRAGMA user_version = " + std::to_string(sqlite_checkpoint_store::kSchemaVersion));
  tx.commit();
}

// Brings a file of schema 2 to 5 to schema 6, in one transaction.
void migrate_to_6(SQLite::Database& db, int version) {
  if (version >= 6) return;
  SQLite::Transaction tx(db);
  if (version == 2) db.exec(kMigrate2To3);
  if (version <= 3) db.exec(kMigrate3To4);
  if (version <= 4) db.exec(kMigrate4To5);
  if (version <= 5) db.exec(kMigrate5To6);
  db.exec("PRAGMA user_version = 6");
  tx.commit();
}

// Takes the main file's lock (kept: locking_mode EXCLUSIVE) before the rows file is touched.
void db_lock(SQLite::Database& db) {
  db.exec("BEGIN EXCLUSIVE");
  db.exec("COMMIT");
}

void remove_rows_file(const std::string& rows_path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(rows_path + suffix, ec);
}

std::int64_t new_pair_id();

// Schema 6 -> 7, first half: the pair id the rows file will get is recorded in the main file
// (table `migrating`) before the rows file is made, so that a rows file found later is known to
// be this migration's own leftover. A rows file beside a schema-6 file that has no such record
// belongs to another database: refused.
status begin_rows_migration(SQLite::Database& db, const std::string& path,
                            const std::string& rows_path, int version) {
  if (db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'migrating'").getInt() > 0) {
    return {};  // resumed after a crash: the rows file there, if any, is ours
  }
  if (std::filesystem::exists(rows_path)) {
    return refusal(path, "it is of schema " + std::to_string(version) +
                             " (which has no rows file), but " + rows_path +
                             " beside it belongs to another database; move that file away");
  }
  SQLite::Transaction tx(db);
  db.exec("CREATE TABLE migrating (id INTEGER PRIMARY KEY CHECK (id = 0), pair INTEGER NOT NULL)");
  SQLite::Statement row(db, "INSERT INTO migrating VALUES (0, ?)");
  row.bind(1, new_pair_id());
  row.exec();
  tx.commit();
  return {};
}

// Schema 6 -> 7, second half: the rows move out to a new rows file (this migration's leftover
// replaced), copied and committed there first; then one transaction of the main file drops
// them, records the pair id and the version. A crash between the two leaves a schema-6 file,
// migrated again at the next open. Throws on a failure (the file stays at schema 6).
void move_rows_out(SQLite::Database& db, const std::string& rows_path) {
  const std::int64_t pair = db.execAndGet("SELECT pair FROM migrating WHERE id = 0").getInt64();
  remove_rows_file(rows_path);
  {
    auto created = sqlite_rows_store::create(rows_path, pair);
    if (!created) throw std::runtime_error(created.error().message());
  }  // closed: its WAL is checkpointed and removed
  SQLite::Statement attach(db, "ATTACH DATABASE ? AS rows");
  attach.bind(1, rows_path);
  attach.exec();
  try {
    db.exec("PRAGMA rows.synchronous = FULL");
    SQLite::Transaction copy(db);
    db.exec("INSERT INTO rows.fingerprints SELECT swarm, kind, fp, data FROM main.fingerprints");
    db.exec(
        "INSERT INTO rows.staged SELECT id, generation, swarm, kind, fp, data FROM main.staged");
    copy.commit();
  } catch (...) {
    db.exec("DETACH DATABASE rows");
    throw;
  }
  db.exec("DETACH DATABASE rows");
  SQLite::Transaction tx(db);
  db.exec(kMigrate6To7);
  SQLite::Statement set_pair(db, "UPDATE compaction SET pair = ? WHERE id = 0");
  set_pair.bind(1, pair);
  set_pair.exec();
  db.exec("PRAGMA user_version = 7");
  tx.commit();
}

// Brings a file of schema 2 to 6 to schema 7. The intent to move the rows out is recorded first
// (a rows file of another database beside it is refused before anything is written); a failure
// after that is reported as such: the next start migrates again.
status migrate_to_7(SQLite::Database& db, const std::string& path, const std::string& rows_path,
                    int version) {
  if (version >= 7) return {};
  if (auto s = begin_rows_migration(db, path, rows_path, version); !s.ok()) return s;
  try {
    migrate_to_6(db, version);
    move_rows_out(db, rows_path);
  } catch (const std::exception& e) {
    return status::error("migrating " + path + " to schema " +
                         std::to_string(sqlite_checkpoint_store::kSchemaVersion) + " failed (" +
                         e.what() + "); it is migrated again at the next start");
  }
  return {};
}

// Schema 7 -> 8 changes no table: schema 8 writes fingerprint blobs in the compact format, and
// reads both, so only the version moves (builds of schema 7 would not read the new blobs: the
// version keeps them off the file). Done once the rows file opened: a file refused for its rows
// file stays readable by the build that wrote it. The rows file keeps its own version
// (sqlite_rows_store::kSchemaVersion).
void migrate_to_8(SQLite::Database& db, int version) {
  if (version != 0 && version < 8) db.exec("PRAGMA user_version = 8");  // its own transaction
}

std::int64_t new_pair_id() {
  std::random_device rd;
  const std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
  return static_cast<std::int64_t>(v >> 1) | 1;  // positive, never 0
}

// Refuses a main file that is a rows file, not ours, of an unreadable version, or corrupted.
status check_main(SQLite::Database& db, const std::string& path, int app, int version, int tables,
                  bool quick_check) {
  if (app == kRowsApplicationId) {
    return refusal(path, "it is the rows file of a loopguard database; --db names the main file (" +
                             path + " without \"-rows\")");
  }
  if (auto s = sqlite_file::check_version(path, app, version, tables,
                                          sqlite_checkpoint_store::kSchemaVersion);
      !s.ok()) {
    return s;
  }
  if (sqlite_file::quick_check_due(path, quick_check, tables,
                                   sqlite_checkpoint_store::kQuickCheckMaxBytes)) {
    const std::string check = db.execAndGet("PRAGMA quick_check").getString();
    if (check != "ok") return refusal(path, "it is corrupted (quick_check: " + check + ")");
  }
  return {};
}

// Opens the rows file of the main file `db` (at `path`, schema 7), or makes it when the main
// file has none yet (its pair id is 0: a new database, or a crash right after its schema; no
// compaction can have written one, so a leftover holds nothing and is replaced).
status open_rows(SQLite::Database& db, std::unique_ptr<sqlite_rows_store>& out,
                 const std::string& path, bool quick_check) {
  const std::string rows_path = sqlite_rows_store::path_for(path);
  const bool in_memory = path == sqlite_file::kMemory;
  const std::int64_t pair = db.execAndGet("SELECT pair FROM compaction WHERE id = 0").getInt64();
  if (pair == 0) {
    if (!in_memory) remove_rows_file(rows_path);  // open() holds the main file's lock
    const std::int64_t fresh = new_pair_id();
    auto rows = sqlite_rows_store::create(rows_path, fresh);
    if (!rows) return rows.error();
    out = std::move(*rows);
    SQLite::Statement set_pair(db, "UPDATE compaction SET pair = ? WHERE id = 0");
    set_pair.bind(1, fresh);
    set_pair.exec();
    return {};
  }
  if (!in_memory && !sqlite_file::exists(rows_path)) {
    return refusal(path, rows_path +
                             " is missing: it holds this database's fingerprint rows (a backup "
                             "or a copy takes both files)");
  }
  auto rows = sqlite_rows_store::open(rows_path, pair, quick_check);
  if (!rows) return rows.error();
  out = std::move(*rows);
  return {};
}

// A rows file beside a new main file belongs to a database whose main file is gone (the main
// file is always made first): never taken for this one's.
status new_beside_rows(const std::string& path, const std::string& rows_path, int version) {
  if (version != 0 || path == sqlite_file::kMemory || !std::filesystem::exists(rows_path)) {
    return {};
  }
  return refusal(path, "it is new, but " + rows_path +
                           " beside it belongs to another database (whose main file is gone); "
                           "move that file away, or restore the main file it belongs to");
}

}  // namespace

result<std::unique_ptr<sqlite_checkpoint_store>> sqlite_checkpoint_store::open(
    const std::string& path, options opts) {
  if (auto s = sqlite_file::check_header(path); !s.ok()) return s;
  const std::string rows_path = sqlite_rows_store::path_for(path);
  const bool in_memory = path == sqlite_file::kMemory;
  std::unique_ptr<impl> p;
  int migrated_from = 0;
  try {
    p = std::make_unique<impl>(path);
    const int app = p->db.execAndGet("PRAGMA application_id").getInt();
    int version = p->db.execAndGet("PRAGMA user_version").getInt();
    int tables = p->db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
    if (auto s = check_main(p->db, path, app, version, tables, opts.quick_check); !s.ok()) {
      return s;
    }
    if (auto s = new_beside_rows(path, rows_path, version); !s.ok()) return s;
    if (auto s = sqlite_file::configure(p->db, path, kCacheKiB, kWalAutocheckpointPages); !s.ok()) {
      return s;
    }
    // Every decision below is made under the main file's lock (kept: locking_mode EXCLUSIVE),
    // on what the file holds then: another process may have migrated it since the reads above.
    if (!in_memory) {
      db_lock(p->db);
      version = p->db.execAndGet("PRAGMA user_version").getInt();
      tables = p->db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
      if (auto s = check_main(p->db, path, app, version, tables, false); !s.ok()) return s;
      if (auto s = new_beside_rows(path, rows_path, version); !s.ok()) return s;
    }
    if (version == 0) {
      create_schema(p->db);
    } else {
      if (auto s = migrate_to_7(p->db, path, rows_path, version); !s.ok()) return s;
      if (version != kSchemaVersion) migrated_from = version;
    }
    if (auto s = open_rows(p->db, p->rows, path, opts.quick_check); !s.ok()) return s;
    migrate_to_8(p->db, version);
    p->prepare();
  } catch (const SQLite::Exception& e) {
    return sqlite_file::open_refusal(path, e, p ? &p->db : nullptr);
  } catch (const std::exception& e) {
    return refusal(path, std::string("cannot open it as a loopguard database (") + e.what() + ")");
  }
  return std::unique_ptr<sqlite_checkpoint_store>(
      new sqlite_checkpoint_store(path, std::move(p), migrated_from));
}

sqlite_checkpoint_store::sqlite_checkpoint_store(std::string path, std::unique_ptr<impl> p,
                                                 int migrated_from)
    : migrated_from_(migrated_from), path_(std::move(path)), impl_(std::move(p)) {}

sqlite_checkpoint_store::~sqlite_checkpoint_store() {
  rollback();
}

result<stored_state> sqlite_checkpoint_store::load_streaming(const fingerprint_sink& sink) {
  stored_state out;
  const status s = guarded(path_, "loading the checkpoint", [&] {
    // A big cache would only keep a copy of the whole file after the rows are decoded.
    impl_->db.exec("PRAGMA cache_size = " + std::to_string(-kLoadCacheKiB));
    SQLite::Statement swarms(impl_->db,
                             "SELECT swarm, latest_t, spent_tokens, spent_amount, wasted_tokens, "
                             "wasted_amount, handoffs, expired FROM swarms");
    while (swarms.executeStep()) {
      const auto cost = [&](int col) {
        return protocol::cost{as_uint(swarms.getColumn(col).getInt64()),
                              swarms.getColumn(col + 1).getDouble()};
      };
      swarm_row row{
          swarms.getColumn(0).getString(), swarms.getColumn(1).getDouble(), cost(2), cost(4), {}};
      if (!decode_handoffs(blob_of(swarms.getColumn(6)), row.handoffs)) {
        throw std::runtime_error("a swarm row has a malformed handoffs blob");
      }
      if (!swarms.getColumn(7).isNull()) row.expired = swarms.getColumn(7).getDouble();
      out.state.swarms.push_back(std::move(row));
    }
    SQLite::Statement workers(impl_->db, "SELECT swarm, id, name FROM workers");
    while (workers.executeStep()) {
      out.state.workers.push_back({workers.getColumn(0).getString(),
                                   static_cast<std::uint32_t>(workers.getColumn(1).getInt64()),
                                   workers.getColumn(2).getString()});
    }
    const std::int64_t current =
        impl_->db.execAndGet("SELECT generation FROM compaction WHERE id = 0").getInt64();
    if (auto r = impl_->rows->load(current, sink); !r.ok()) throw std::runtime_error(r.message());
    // Records at or below the floor are covered by the rows (a trim deletes them later).
    SQLite::Statement log(impl_->db,
                          "SELECT data FROM log WHERE id > (SELECT log_floor FROM compaction "
                          "WHERE id = 0) ORDER BY id");
    while (log.executeStep()) out.log.emplace_back(blob_of(log.getColumn(0)));
    impl_->db.exec("PRAGMA cache_size = " + std::to_string(-kCacheKiB));
    SQLite::Statement seqs(impl_->db,
                           "SELECT swarm, worker, incarnation, seq, seen FROM sequences");
    while (seqs.executeStep()) {
      out.sequences.push_back({{seqs.getColumn(0).getString(), seqs.getColumn(1).getString(),
                                seqs.getColumn(2).getString()},
                               as_uint(seqs.getColumn(3).getInt64()),
                               seqs.getColumn(4).getDouble()});
    }
    SQLite::Statement seen(impl_->db, "SELECT swarm, seen FROM swarm_seen");
    while (seen.executeStep()) {
      out.swarms_seen.push_back({seen.getColumn(0).getString(), seen.getColumn(1).getDouble()});
    }
    SQLite::Statement expired(
        impl_->db, "SELECT swarm, worker, incarnation, expired FROM expired_incarnations");
    while (expired.executeStep()) {
      out.expired.push_back({{expired.getColumn(0).getString(), expired.getColumn(1).getString(),
                              expired.getColumn(2).getString()},
                             expired.getColumn(3).getDouble()});
    }
  });
  if (!s.ok()) return s;
  return out;
}

status sqlite_checkpoint_store::begin() {
  return impl_->tx.begin(impl_->db, path_);
}

status sqlite_checkpoint_store::clear_swarm(std::string_view swarm) {
  return guarded(path_, "clearing a swarm", [&] {
    for (auto* st : {&*impl_->clear_swarms, &*impl_->clear_workers}) {
      st->reset();
      st->bind(1, std::string(swarm));
      st->exec();
    }
  });
}

status sqlite_checkpoint_store::put_swarm(const swarm_row& row) {
  return guarded(path_, "writing a swarm", [&] {
    auto& st = *impl_->put_swarm;
    st.reset();
    st.bind(1, row.swarm);
    st.bind(2, row.latest_t);
    st.bind(3, as_int(row.spent.tokens));
    st.bind(4, row.spent.amount);
    st.bind(5, as_int(row.wasted.tokens));
    st.bind(6, row.wasted.amount);
    encode_handoffs(row.handoffs, impl_->scratch);
    bind_blob(st, 7, impl_->scratch);
    if (row.expired != 0) {
      st.bind(8, row.expired);
    } else {
      st.bind(8);  // NULL: live
    }
    st.exec();
  });
}

status sqlite_checkpoint_store::put_worker(const worker_row& row) {
  return guarded(path_, "writing a worker", [&] {
    auto& st = *impl_->put_worker;
    st.reset();
    st.bind(1, row.swarm);
    st.bind(2, static_cast<std::int64_t>(row.id));
    st.bind(3, row.name);
    st.exec();
  });
}

status sqlite_checkpoint_store::put_sequence(const sequence_row& row) {
  return guarded(path_, "writing a sequence number", [&] {
    auto& st = *impl_->put_seq;
    st.reset();
    st.bind(1, row.id.swarm);
    st.bind(2, row.id.worker);
    st.bind(3, row.id.incarnation);
    st.bind(4, as_int(row.seq));
    st.bind(5, row.seen);
    st.exec();
  });
}

namespace {
void bind_identity(SQLite::Statement& st, int first, const worker_identity& id) {
  st.bind(first, id.swarm);
  st.bind(first + 1, id.worker);
  st.bind(first + 2, id.incarnation);
}
}  // namespace

status sqlite_checkpoint_store::erase_sequence(const worker_identity& id) {
  return guarded(path_, "deleting an expired incarnation's sequence number", [&] {
    auto& st = *impl_->erase_seq;
    st.reset();
    bind_identity(st, 1, id);
    st.exec();
  });
}

status sqlite_checkpoint_store::put_seen(const seen_row& row) {
  return guarded(path_, "writing an incarnation's last activity", [&] {
    auto& st = *impl_->put_seen;
    st.reset();
    st.bind(1, row.seen);
    bind_identity(st, 2, row.id);
    st.exec();
  });
}

status sqlite_checkpoint_store::put_expired(const expired_row& row) {
  return guarded(path_, "writing an expired incarnation", [&] {
    auto& st = *impl_->put_expired;
    st.reset();
    bind_identity(st, 1, row.id);
    st.bind(4, row.expired);
    st.exec();
  });
}

status sqlite_checkpoint_store::erase_expired(const worker_identity& id) {
  return guarded(path_, "forgetting an expired incarnation", [&] {
    auto& st = *impl_->erase_expired;
    st.reset();
    bind_identity(st, 1, id);
    st.exec();
  });
}

status sqlite_checkpoint_store::erase_swarm_seen(std::string_view swarm) {
  return guarded(path_, "deleting a swarm's last activity", [&] {
    auto& st = *impl_->erase_swarm_seen;
    st.reset();
    st.bind(1, std::string(swarm));
    st.exec();
  });
}

status sqlite_checkpoint_store::put_swarm_seen(const swarm_seen_row& row) {
  return guarded(path_, "writing a swarm's last activity", [&] {
    auto& st = *impl_->put_swarm_seen;
    st.reset();
    st.bind(1, row.swarm);
    st.bind(2, row.seen);
    st.exec();
  });
}

status sqlite_checkpoint_store::truncate_log() {
  return guarded(path_, "truncating the log", [&] {
    impl_->truncate_log->reset();
    impl_->truncate_log->exec();
  });
}

status sqlite_checkpoint_store::append_log(std::string_view record) {
  return guarded(path_, "appending to the log", [&] {
    auto& st = *impl_->append_log;
    st.reset();
    bind_blob(st, 1, record);
    st.exec();
  });
}

result<std::int64_t> sqlite_checkpoint_store::log_end() {
  std::int64_t end = 0;
  const status s = guarded(path_, "reading the log's end", [&] {
    auto& st = *impl_->log_end;
    st.reset();
    if (st.executeStep()) end = st.getColumn(0).getInt64();
    st.reset();
  });
  if (!s.ok()) return s;
  return end;
}

status sqlite_checkpoint_store::flip(std::int64_t generation, std::int64_t boundary) {
  return guarded(path_, "making a compaction current", [&] {
    auto& st = *impl_->flip;
    st.reset();
    st.bind(1, generation);
    st.bind(2, boundary);
    if (st.exec() != 1) throw std::runtime_error("the compaction table has no row");
  });
}

result<log_trim> sqlite_checkpoint_store::trim_log(std::size_t max_bytes) {
  log_trim out;
  const status s = guarded(path_, "trimming the log", [&] {
    auto& sel = *impl_->trim_select;
    sel.reset();
    std::int64_t last = 0;
    std::size_t bytes = 0;
    while (sel.executeStep()) {
      if (out.records > 0 && bytes >= max_bytes) {
        out.more = true;
        break;
      }
      ++out.records;
      last = sel.getColumn(0).getInt64();
      bytes += static_cast<std::size_t>(sel.getColumn(1).getInt64());
    }
    sel.reset();
    if (out.records == 0) return;
    auto& del = *impl_->trim_delete;
    del.reset();
    del.bind(1, last);
    del.exec();
  });
  if (!s.ok()) return s;
  return out;
}

result<std::int64_t> sqlite_checkpoint_store::generation() {
  std::int64_t gen = 0;
  const status s = guarded(path_, "reading the current generation", [&] {
    auto& st = *impl_->generation;
    st.reset();
    if (!st.executeStep()) throw std::runtime_error("the compaction table has no row");
    gen = st.getColumn(0).getInt64();
    st.reset();
  });
  if (!s.ok()) return s;
  return gen;
}

rows_store& sqlite_checkpoint_store::rows() {
  return *impl_->rows;
}

status sqlite_checkpoint_store::commit() {
  return impl_->tx.commit(impl_->db, path_);
}

void sqlite_checkpoint_store::rollback() noexcept {
  if (impl_) impl_->tx.rollback(impl_->db);
}

}  // namespace loopguard::daemon
