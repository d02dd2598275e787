#include "store/sqlite_checkpoint_store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include "store/fingerprint_codec.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

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
CREATE TABLE fingerprints (
  swarm TEXT NOT NULL,
  kind  INTEGER NOT NULL,
  fp    INTEGER NOT NULL,
  data  BLOB NOT NULL,
  PRIMARY KEY (swarm, kind, fp)
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
  generation INTEGER NOT NULL,
  log_floor  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO compaction VALUES (0, 0, 0);
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

constexpr int kCacheKiB = 32 * 1024;     // serving: a compaction writes in key order
constexpr int kLoadCacheKiB = 8 * 1024;  // for loading: it reads every page once
constexpr int kWalAutocheckpointPages = 1024;
constexpr int kOldestReadableVersion = 2;  // version 1 had no log; no such file was deployed

std::int64_t as_int(std::uint64_t v) {
  return std::bit_cast<std::int64_t>(v);
}
std::uint64_t as_uint(std::int64_t v) {
  return std::bit_cast<std::uint64_t>(v);
}

void bind_blob(SQLite::Statement& st, int index, std::string_view blob) {
  st.bindNoCopy(index, blob.data(), static_cast<int>(blob.size()));
}
std::string_view blob_of(const SQLite::Column& c) {
  return {static_cast<const char*>(c.getBlob()), static_cast<std::size_t>(c.getBytes())};
}

}  // namespace

struct sqlite_checkpoint_store::impl {
  // One thread at a time uses the connection (the store is not thread-safe): no SQLite mutex.
  explicit impl(const std::string& path)
      : db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX) {}
  SQLite::Database db;
  std::optional<SQLite::Statement> clear_swarms, clear_workers, clear_fps, put_swarm, put_worker,
      put_fp, erase_fp, put_seq, truncate_log, append_log, erase_seq, put_seen, put_expired,
      erase_expired, erase_swarm_seen, put_swarm_seen, log_end, stage, flip, trim_select,
      trim_delete, fold_select, fold_delete, generation;
  std::string scratch;  // the fingerprint blob being written
  bool in_transaction = false;

  void prepare() {
    clear_swarms.emplace(db, "DELETE FROM swarms WHERE swarm = ?");
    clear_workers.emplace(db, "DELETE FROM workers WHERE swarm = ?");
    clear_fps.emplace(db, "DELETE FROM fingerprints WHERE swarm = ?");
    put_swarm.emplace(db,
                      "INSERT OR REPLACE INTO swarms (swarm, latest_t, spent_tokens, spent_amount, "
                      "wasted_tokens, wasted_amount, handoffs, expired) VALUES (?, ?, ?, ?, ?, "
                      "?, ?, ?)");
    put_worker.emplace(db, "INSERT OR REPLACE INTO workers VALUES (?, ?, ?)");
    put_fp.emplace(db, "INSERT OR REPLACE INTO fingerprints VALUES (?, ?, ?, ?)");
    erase_fp.emplace(db, "DELETE FROM fingerprints WHERE swarm = ? AND kind = ? AND fp = ?");
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
    stage.emplace(db,
                  "INSERT INTO staged (generation, swarm, kind, fp, data) VALUES (?, ?, ?, ?, ?)");
    flip.emplace(db, "UPDATE compaction SET generation = ?, log_floor = ? WHERE id = 0");
    // length() of a blob reads its size from the record header, not its overflow pages.
    trim_select.emplace(db,
                        "SELECT id, length(data) FROM log WHERE id <= (SELECT log_floor FROM "
                        "compaction WHERE id = 0) ORDER BY id");
    trim_delete.emplace(db, "DELETE FROM log WHERE id <= ?");
    fold_select.emplace(db,
                        "SELECT id, generation = (SELECT generation FROM compaction), swarm, kind, "
                        "fp, data FROM staged ORDER BY id LIMIT ?");
    fold_delete.emplace(db, "DELETE FROM staged WHERE id <= ?");
    generation.emplace(db, "SELECT generation FROM compaction WHERE id = 0");
  }
};

namespace {

// Runs one step; an SQLite exception becomes a status naming the step and the file.
template <class F>
status guarded(const std::string& path, const char* step, F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return status::error(std::string(step) + " failed on " + path + ": " + e.what());
  }
}

constexpr const char* kMemory = ":memory:";

status refusal(const std::string& path, const std::string& why) {
  return status::error("refusing " + path + ": " + why + "; the file was not modified");
}

status check_header(const std::string& path) {
  std::error_code ec;
  if (path == kMemory || !std::filesystem::exists(path, ec) ||
      std::filesystem::file_size(path, ec) == 0) {
    return {};  // a new database
  }
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  if (!in || std::memcmp(header, "SQLite format 3", 16) != 0) {
    return refusal(path, "not a SQLite database (bad file header)");
  }
  return {};
}

// Refuses a database whose application id or schema version is not ours to open.
status check_version(const std::string& path, int app, int version, int tables) {
  constexpr int newest = sqlite_checkpoint_store::kSchemaVersion;
  if (app != 0 && app != sqlite_checkpoint_store::kApplicationId) {
    return refusal(path, "it is a SQLite database of another application (application_id " +
                             std::to_string(app) + ")");
  }
  if (version > newest) {
    return refusal(path, "it was written by a newer loopguardd (schema version " +
                             std::to_string(version) + "; this build reads up to " +
                             std::to_string(newest) + ")");
  }
  if (version == 0 && tables > 0) {
    return refusal(path, "it has tables but no loopguard schema version");
  }
  if (version != 0 && version < kOldestReadableVersion) {
    return refusal(path, "it has schema version " + std::to_string(version) +
                             ", which this build no longer reads (it reads versions " +
                             std::to_string(kOldestReadableVersion) + " to " +
                             std::to_string(newest) + ")");
  }
  return {};
}

bool quick_check_due(const std::string& path, bool wanted, int tables) {
  if (!wanted || tables == 0) return false;
  std::error_code size_error;
  const auto bytes = std::filesystem::file_size(path, size_error);
  return size_error || bytes <= sqlite_checkpoint_store::kQuickCheckMaxBytes;
}

// The connection settings of docs/storage.md, or the refusal of a database that cannot take
// them. An in-memory database has no WAL: its journal stays "memory".
status configure(SQLite::Database& db, const std::string& path) {
  db.exec("PRAGMA locking_mode = EXCLUSIVE");
  const std::string mode = db.execAndGet("PRAGMA journal_mode = WAL").getString();
  const char* file = sqlite3_db_filename(db.getHandle(), "main");
  const bool in_memory = file == nullptr || *file == '\0';
  if (mode != "wal" && !(in_memory && mode == "memory")) {
    return refusal(path, "cannot switch it to WAL mode (journal_mode is " + mode + ")");
  }
  db.exec("PRAGMA synchronous = FULL");
  // Group commits rewrite many scattered rows: keep the B-tree pages in memory (grows only
  // as used) and fold the WAL back less often.
  db.exec("PRAGMA cache_size = " + std::to_string(-kCacheKiB));
  db.exec("PRAGMA wal_autocheckpoint = " + std::to_string(kWalAutocheckpointPages));
  return {};
}

void create_schema(SQLite::Database& db) {
  SQLite::Transaction tx(db);
  db.exec(kSchema);
  db.exec("PRAGMA application_id = " + std::to_string(sqlite_checkpoint_store::kApplicationId));
  db.exec("PRAGMA user_version = " + std::to_string(sqlite_checkpoint_store::kSchemaVersion));
  tx.commit();
}

// Brings a file of an older readable schema to this build's, in one transaction.
void migrate(SQLite::Database& db, int version) {
  if (version == sqlite_checkpoint_store::kSchemaVersion) return;
  SQLite::Transaction tx(db);
  if (version == 2) db.exec(kMigrate2To3);
  if (version <= 3) db.exec(kMigrate3To4);
  if (version <= 4) db.exec(kMigrate4To5);
  if (version <= 5) db.exec(kMigrate5To6);
  db.exec("PRAGMA user_version = " + std::to_string(sqlite_checkpoint_store::kSchemaVersion));
  tx.commit();
}

}  // namespace

result<std::unique_ptr<sqlite_checkpoint_store>> sqlite_checkpoint_store::open(
    const std::string& path, options opts) {
  if (auto s = check_header(path); !s.ok()) return s;
  std::unique_ptr<impl> p;
  int migrated_from = 0;
  try {
    p = std::make_unique<impl>(path);
    const int app = p->db.execAndGet("PRAGMA application_id").getInt();
    const int version = p->db.execAndGet("PRAGMA user_version").getInt();
    const int tables = p->db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
    if (auto s = check_version(path, app, version, tables); !s.ok()) return s;
    if (quick_check_due(path, opts.quick_check, tables)) {
      const std::string check = p->db.execAndGet("PRAGMA quick_check").getString();
      if (check != "ok") return refusal(path, "it is corrupted (quick_check: " + check + ")");
    }
    if (auto s = configure(p->db, path); !s.ok()) return s;
    if (version == 0) {
      create_schema(p->db);
    } else {
      migrate(p->db, version);
      if (version != kSchemaVersion) migrated_from = version;
    }
    p->prepare();
  } catch (const SQLite::Exception& e) {
    // A full disk is not a damaged file: opening may need space (to recover the WAL, to
    // migrate), and the remedy is space, not a repair.
    const bool no_space =
        e.getErrorCode() == SQLITE_FULL || (p && sqlite3_system_errno(p->db.getHandle()) == ENOSPC);
    if (no_space) {
      return refusal(path, std::string("the disk is full (") + e.what() +
                               "): free space on its file system and start again");
    }
    if (e.getErrorCode() == SQLITE_BUSY || e.getErrorCode() == SQLITE_LOCKED) {
      return refusal(path, std::string("another process holds it (") + e.what() +
                               "): a running loopguardd locks its database; stop it first");
    }
    return refusal(path, std::string("cannot open it as a loopguard database (") + e.what() + ")");
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

namespace {
// A fingerprint's identity as one string (swarm, NUL, kind, value), for the overlay's set.
std::string overlay_key(std::string_view swarm, std::int64_t kind, std::int64_t fp) {
  std::string k(swarm);
  k.push_back('\0');
  k.push_back(static_cast<char>(kind));
  k.append(reinterpret_cast<const char*>(&fp), sizeof fp);
  return k;
}
}  // namespace

struct sqlite_checkpoint_store::overlay {
  std::vector<fingerprint_row> rows;     // the current generation's staged rows
  std::unordered_set<std::string> keys;  // every fingerprint it writes or erases
};

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
    overlay over = load_overlay();
    load_fingerprints(sink, over);
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

sqlite_checkpoint_store::overlay sqlite_checkpoint_store::load_overlay() {
  overlay over;
  // A fingerprint may be staged more than once (taken in two parts): the latest, by id, wins.
  std::unordered_map<std::string, std::size_t> at;  // key -> index in over.rows
  std::vector<bool> erased;                         // per over.rows: a later erasure
  SQLite::Statement st(impl_->db,
                       "SELECT swarm, kind, fp, data FROM staged WHERE generation = "
                       "(SELECT generation FROM compaction WHERE id = 0) ORDER BY id");
  while (st.executeStep()) {
    const std::string swarm = st.getColumn(0).getString();
    const std::int64_t kind = st.getColumn(1).getInt64();
    const std::int64_t fp = st.getColumn(2).getInt64();
    std::string key = overlay_key(swarm, kind, fp);
    over.keys.insert(key);
    const auto [it, fresh] = at.try_emplace(std::move(key), over.rows.size());
    if (fresh) {
      over.rows.emplace_back();
      erased.push_back(false);
    }
    const bool gone = st.getColumn(3).isNull();
    erased[it->second] = gone;
    if (gone) continue;
    fingerprint_row& r = over.rows[it->second];
    r = {};
    r.swarm = swarm;
    r.key.kind = kind == 0 ? fingerprint_kind::exact : fingerprint_kind::structural;
    r.key.value = as_uint(fp);
    if (!decode_fingerprint(blob_of(st.getColumn(3)), r.stats)) {
      throw std::runtime_error("a staged fingerprint row has a malformed data blob");
    }
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < over.rows.size(); ++i) {
    if (erased[i]) continue;
    if (kept != i) over.rows[kept] = std::move(over.rows[i]);  // never a self-move
    ++kept;
  }
  over.rows.resize(kept);
  return over;
}

// On the C API: SQLite::Column copies a shared_ptr per column, a cost per row that shows at
// 1M rows.
void sqlite_checkpoint_store::load_fingerprints(const fingerprint_sink& sink, overlay& over) {
  sqlite3* db = impl_->db.getHandle();
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT swarm, kind, fp, data FROM fingerprints", -1, &raw, nullptr) !=
      SQLITE_OK) {
    throw std::runtime_error(sqlite3_errmsg(db));
  }
  const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
  const auto text = [&](int col) {
    const void* p = col == 0 ? static_cast<const void*>(sqlite3_column_text(raw, col))
                             : sqlite3_column_blob(raw, col);
    return std::string_view(static_cast<const char*>(p),
                            static_cast<std::size_t>(sqlite3_column_bytes(raw, col)));
  };
  std::vector<fingerprint_row> chunk;
  chunk.reserve(kLoadChunkRows);
  std::string swarm;  // of the previous row: rows come grouped by swarm
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    if (const auto name = text(0); name != swarm) swarm = name;
    if (!over.keys.empty() && over.keys.contains(overlay_key(swarm, sqlite3_column_int64(raw, 1),
                                                             sqlite3_column_int64(raw, 2)))) {
      continue;  // a staged row of the current generation replaces or erases it
    }
    fingerprint_row& r = chunk.emplace_back();
    r.swarm = swarm;
    r.key.kind =
        sqlite3_column_int(raw, 1) == 0 ? fingerprint_kind::exact : fingerprint_kind::structural;
    r.key.value = as_uint(sqlite3_column_int64(raw, 2));
    if (!decode_fingerprint(text(3), r.stats)) {
      throw std::runtime_error("a fingerprint row has a malformed data blob");
    }
    if (chunk.size() == kLoadChunkRows) {
      sink(chunk);
      chunk.clear();
      chunk.reserve(kLoadChunkRows);
    }
  }
  if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
  for (auto& r : over.rows) {
    chunk.push_back(std::move(r));
    if (chunk.size() == kLoadChunkRows) {
      sink(chunk);
      chunk.clear();
      chunk.reserve(kLoadChunkRows);
    }
  }
  over.rows.clear();
  if (!chunk.empty()) sink(chunk);
}

status sqlite_checkpoint_store::lock_exclusive() {
  try {
    impl_->db.exec("BEGIN EXCLUSIVE");
    impl_->db.exec("COMMIT");
  } catch (const SQLite::Exception& e) {
    if (e.getErrorCode() == SQLITE_BUSY || e.getErrorCode() == SQLITE_LOCKED) {
      return refusal(path_, std::string("another process holds it (") + e.what() +
                                "): a running loopguardd locks its database; stop it first");
    }
    return refusal(path_, std::string("cannot lock it (") + e.what() + ")");
  }
  return {};
}

status sqlite_checkpoint_store::begin() {
  return guarded(path_, "BEGIN", [&] {
    impl_->db.exec("BEGIN IMMEDIATE");
    impl_->in_transaction = true;
  });
}

status sqlite_checkpoint_store::clear_swarm(std::string_view swarm) {
  return guarded(path_, "clearing a swarm", [&] {
    for (auto* st : {&*impl_->clear_swarms, &*impl_->clear_workers, &*impl_->clear_fps}) {
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

status sqlite_checkpoint_store::put_fingerprint(const fingerprint_row& row) {
  return guarded(path_, "writing a fingerprint", [&] {
    auto& st = *impl_->put_fp;
    encode_fingerprint(row.stats, impl_->scratch);
    st.reset();
    st.bind(1, row.swarm);
    st.bind(2, static_cast<std::int32_t>(row.key.kind));
    st.bind(3, as_int(row.key.value));
    bind_blob(st, 4, impl_->scratch);
    st.exec();
  });
}

status sqlite_checkpoint_store::erase_fingerprint(const fingerprint_ref& ref) {
  return guarded(path_, "erasing a fingerprint", [&] {
    auto& st = *impl_->erase_fp;
    st.reset();
    st.bind(1, ref.swarm);
    st.bind(2, static_cast<std::int32_t>(ref.key.kind));
    st.bind(3, as_int(ref.key.value));
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

namespace {
void bind_stage_key(SQLite::Statement& st, std::int64_t generation, const std::string& swarm,
                    fingerprint_key key) {
  st.bind(1, generation);
  st.bind(2, swarm);
  st.bind(3, static_cast<std::int32_t>(key.kind));
  st.bind(4, std::bit_cast<std::int64_t>(key.value));
}
}  // namespace

status sqlite_checkpoint_store::stage_fingerprint(std::int64_t generation,
                                                  const fingerprint_row& row) {
  return guarded(path_, "staging a fingerprint", [&] {
    auto& st = *impl_->stage;
    encode_fingerprint(row.stats, impl_->scratch);
    st.reset();
    bind_stage_key(st, generation, row.swarm, row.key);
    bind_blob(st, 5, impl_->scratch);
    st.exec();
  });
}

status sqlite_checkpoint_store::stage_erase(std::int64_t generation, const fingerprint_ref& ref) {
  return guarded(path_, "staging an erased fingerprint", [&] {
    auto& st = *impl_->stage;
    st.reset();
    bind_stage_key(st, generation, ref.swarm, ref.key);
    st.bind(5);  // NULL: erased
    st.exec();
  });
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

result<std::size_t> sqlite_checkpoint_store::fold_staged(std::size_t limit) {
  std::size_t moved = 0;
  const status s = guarded(path_, "folding staged rows", [&] {
    auto& sel = *impl_->fold_select;
    sel.reset();
    sel.bind(1, static_cast<std::int64_t>(
                    std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max())));
    std::int64_t last = 0;
    while (sel.executeStep()) {
      ++moved;
      last = sel.getColumn(0).getInt64();
      if (sel.getColumn(1).getInt() == 0) continue;  // never became current: dropped
      const bool erased = sel.getColumn(5).isNull();
      auto& st = erased ? *impl_->erase_fp : *impl_->put_fp;
      st.reset();
      st.bind(1, sel.getColumn(2).getString());
      st.bind(2, sel.getColumn(3).getInt());
      st.bind(3, sel.getColumn(4).getInt64());
      if (!erased) bind_blob(st, 4, blob_of(sel.getColumn(5)));
      st.exec();
    }
    sel.reset();
    if (moved == 0) return;
    auto& del = *impl_->fold_delete;
    del.reset();
    del.bind(1, last);
    del.exec();
  });
  if (!s.ok()) return s;
  return moved;
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

status sqlite_checkpoint_store::commit() {
  return guarded(path_, "COMMIT", [&] {
    impl_->db.exec("COMMIT");
    impl_->in_transaction = false;
  });
}

void sqlite_checkpoint_store::rollback() noexcept {
  if (!impl_ || !impl_->in_transaction) return;
  impl_->in_transaction = false;
  try {
    impl_->db.exec("ROLLBACK");
  } catch (const std::exception&) {
    // SQLite already rolled back (e.g. after a failed COMMIT): nothing is left to undo.
  }
}

}  // namespace loopguard::daemon
