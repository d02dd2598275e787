#include "store/sqlite_rows_store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "store/fingerprint_codec.hpp"
#include "store/sqlite_file.hpp"

namespace loopguard::daemon {
namespace {

using sqlite_file::as_int;
using sqlite_file::as_uint;
using sqlite_file::bind_blob;
using sqlite_file::blob_of;
using sqlite_file::guarded;
using sqlite_file::refusal;

// The rows file's own application id, so that neither file can be opened as the other.
constexpr int kRowsApplicationId = 0x4C47524F;  // "LGRO"

constexpr const char* kSchema = R"sql(
CREATE TABLE fingerprints (
  swarm TEXT NOT NULL,
  kind  INTEGER NOT NULL,
  fp    INTEGER NOT NULL,
  data  BLOB NOT NULL,
  PRIMARY KEY (swarm, kind, fp)
) WITHOUT ROWID;
CREATE TABLE staged (
  id         INTEGER PRIMARY KEY,
  generation INTEGER NOT NULL,
  swarm      TEXT NOT NULL,
  kind       INTEGER NOT NULL,
  fp         INTEGER NOT NULL,
  data       BLOB
);
CREATE TABLE pair (
  id   INTEGER PRIMARY KEY CHECK (id = 0),
  main INTEGER NOT NULL
);
)sql";

constexpr int kCacheKiB = 32 * 1024;     // the fold rewrites neighbouring pages in key order
constexpr int kLoadCacheKiB = 8 * 1024;  // for loading: it reads every page once
// Off the group commits' path, but its fsync competes with theirs: small (1 MiB), like the
// compaction's transactions (group_committer::kJobRows).
constexpr int kWalAutocheckpointPages = 256;

}  // namespace

struct sqlite_rows_store::impl {
  // One thread at a time uses the connection (the store is not thread-safe): no SQLite mutex.
  explicit impl(const std::string& path)
      : db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX) {}
  SQLite::Database db;
  std::optional<SQLite::Statement> put_fp, erase_fp, stage, clear, fold_select, fold_delete;
  std::string scratch;  // the fingerprint blob being written
  sqlite_file::transaction tx;

  void prepare() {
    put_fp.emplace(db, "INSERT OR REPLACE INTO fingerprints VALUES (?, ?, ?, ?)");
    erase_fp.emplace(db, "DELETE FROM fingerprints WHERE swarm = ? AND kind = ? AND fp = ?");
    stage.emplace(db,
                  "INSERT INTO staged (generation, swarm, kind, fp, data) VALUES (?, ?, ?, ?, ?)");
    clear.emplace(db,
                  "INSERT INTO staged (generation, swarm, kind, fp, data) SELECT ?1, swarm, kind, "
                  "fp, NULL FROM fingerprints WHERE swarm = ?2");
    fold_select.emplace(db,
                        "SELECT id, generation = ?2, swarm, kind, fp, data FROM staged ORDER BY id "
                        "LIMIT ?1");
    fold_delete.emplace(db, "DELETE FROM staged WHERE id <= ?");
  }
};

std::string sqlite_rows_store::path_for(const std::string& main_path) {
  return main_path == sqlite_file::kMemory ? main_path : main_path + "-rows";
}

result<std::unique_ptr<sqlite_rows_store>> sqlite_rows_store::create(const std::string& path,
                                                                     std::int64_t pair) {
  std::unique_ptr<impl> p;
  try {
    p = std::make_unique<impl>(path);
    if (p->db.execAndGet("SELECT count(*) FROM sqlite_master").getInt() != 0) {
      return refusal(path, "it already has tables (a new rows file was expected)");
    }
    if (auto s = sqlite_file::configure(p->db, path, kCacheKiB, kWalAutocheckpointPages); !s.ok()) {
      return s;
    }
    SQLite::Transaction tx(p->db);
    p->db.exec(kSchema);
    SQLite::Statement owner(p->db, "INSERT INTO pair VALUES (0, ?)");
    owner.bind(1, pair);
    owner.exec();
    p->db.exec("PRAGMA application_id = " + std::to_string(kRowsApplicationId));
    p->db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    tx.commit();
    p->prepare();
  } catch (const SQLite::Exception& e) {
    return sqlite_file::open_refusal(path, e, p ? &p->db : nullptr);
  } catch (const std::exception& e) {
    return refusal(path, std::string("cannot create it (") + e.what() + ")");
  }
  return std::unique_ptr<sqlite_rows_store>(new sqlite_rows_store(path, std::move(p)));
}

result<std::unique_ptr<sqlite_rows_store>> sqlite_rows_store::open(const std::string& path,
                                                                   std::int64_t pair,
                                                                   bool quick_check) {
  if (auto s = sqlite_file::check_header(path); !s.ok()) return s;
  std::unique_ptr<impl> p;
  try {
    p = std::make_unique<impl>(path);
    const int app = p->db.execAndGet("PRAGMA application_id").getInt();
    const int version = p->db.execAndGet("PRAGMA user_version").getInt();
    if (app != kRowsApplicationId) {
      return refusal(path, app == sqlite_file::kApplicationId
                               ? "it is a loopguard main database, not a rows file"
                               : "it is not a loopguard rows file (application_id " +
                                     std::to_string(app) + ")");
    }
    if (version != kSchemaVersion) {
      return refusal(path, "its schema version is " + std::to_string(version) +
                               " (this build reads rows files of version " +
                               std::to_string(kSchemaVersion) + ")");
    }
    if (sqlite_file::quick_check_due(path, quick_check, 1, sqlite_file::kQuickCheckMaxBytes)) {
      const std::string check = p->db.execAndGet("PRAGMA quick_check").getString();
      if (check != "ok") return refusal(path, "it is corrupted (quick_check: " + check + ")");
    }
    SQLite::Statement owner(p->db, "SELECT main FROM pair WHERE id = 0");
    if (!owner.executeStep() || owner.getColumn(0).getInt64() != pair) {
      return refusal(path, "it belongs to another database (its pair id is not the main file's)");
    }
    owner.reset();
    if (auto s = sqlite_file::configure(p->db, path, kCacheKiB, kWalAutocheckpointPages); !s.ok()) {
      return s;
    }
    p->prepare();
  } catch (const SQLite::Exception& e) {
    return sqlite_file::open_refusal(path, e, p ? &p->db : nullptr);
  } catch (const std::exception& e) {
    return refusal(path, std::string("cannot open it as a loopguard rows file (") + e.what() + ")");
  }
  return std::unique_ptr<sqlite_rows_store>(new sqlite_rows_store(path, std::move(p)));
}

sqlite_rows_store::sqlite_rows_store(std::string path, std::unique_ptr<impl> p)
    : path_(std::move(path)), impl_(std::move(p)) {}

sqlite_rows_store::~sqlite_rows_store() {
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

struct sqlite_rows_store::overlay {
  std::vector<fingerprint_row> rows;     // the current generation's staged rows
  std::unordered_set<std::string> keys;  // every fingerprint it writes or erases
};

sqlite_rows_store::overlay sqlite_rows_store::load_overlay(std::int64_t generation) {
  overlay over;
  // A fingerprint may be staged more than once (taken in two parts): the latest, by id, wins.
  std::unordered_map<std::string, std::size_t> at;  // key -> index in over.rows
  std::vector<bool> erased;                         // per over.rows: a later erasure
  SQLite::Statement st(impl_->db,
                       "SELECT swarm, kind, fp, data FROM staged WHERE generation = ? ORDER BY id");
  st.bind(1, generation);
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
void sqlite_rows_store::load_fingerprints(const fingerprint_sink& sink, overlay& over) {
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
  fingerprint_row row;  // every row is decoded into it (decode_fingerprint sets every field)
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    if (const auto name = text(0); name != row.swarm) row.swarm = name;
    if (!over.keys.empty() &&
        over.keys.contains(
            overlay_key(row.swarm, sqlite3_column_int64(raw, 1), sqlite3_column_int64(raw, 2)))) {
      continue;  // a staged row of the current generation replaces or erases it
    }
    row.key.kind =
        sqlite3_column_int(raw, 1) == 0 ? fingerprint_kind::exact : fingerprint_kind::structural;
    row.key.value = as_uint(sqlite3_column_int64(raw, 2));
    if (!decode_fingerprint(text(3), row.stats)) {
      throw std::runtime_error("a fingerprint row has a malformed data blob");
    }
    sink(row);
  }
  if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
  for (auto& r : over.rows) sink(r);
  over.rows.clear();
}

status sqlite_rows_store::load(std::int64_t generation, const fingerprint_sink& sink) {
  return guarded(path_, "loading the fingerprint rows", [&] {
    // A big cache would only keep a copy of the whole file after the rows are decoded.
    impl_->db.exec("PRAGMA cache_size = " + std::to_string(-kLoadCacheKiB));
    overlay over = load_overlay(generation);
    load_fingerprints(sink, over);
    // The pages read are not wanted again: the cache starts empty.
    impl_->db.exec("PRAGMA shrink_memory");
    impl_->db.exec("PRAGMA cache_size = " + std::to_string(-kCacheKiB));
  });
}

status sqlite_rows_store::begin() {
  return impl_->tx.begin(impl_->db, path_);
}

namespace {
void bind_stage_key(SQLite::Statement& st, std::int64_t generation, const std::string& swarm,
                    fingerprint_key key) {
  st.bind(1, generation);
  st.bind(2, swarm);
  st.bind(3, static_cast<std::int32_t>(key.kind));
  st.bind(4, as_int(key.value));
}
}  // namespace

status sqlite_rows_store::stage_fingerprint(std::int64_t generation, const fingerprint_row& row) {
  return guarded(path_, "staging a fingerprint", [&] {
    auto& st = *impl_->stage;
    encode_fingerprint(row.stats, impl_->scratch);
    st.reset();
    bind_stage_key(st, generation, row.swarm, row.key);
    bind_blob(st, 5, impl_->scratch);
    st.exec();
  });
}

status sqlite_rows_store::stage_erase(std::int64_t generation, const fingerprint_ref& ref) {
  return guarded(path_, "staging an erased fingerprint", [&] {
    auto& st = *impl_->stage;
    st.reset();
    bind_stage_key(st, generation, ref.swarm, ref.key);
    st.bind(5);  // NULL: erased
    st.exec();
  });
}

status sqlite_rows_store::stage_clear(std::int64_t generation, std::string_view swarm) {
  return guarded(path_, "staging a cleared swarm", [&] {
    auto& st = *impl_->clear;
    st.reset();
    st.bind(1, generation);
    st.bind(2, std::string(swarm));
    st.exec();
  });
}

result<std::size_t> sqlite_rows_store::fold_staged(std::int64_t current, std::size_t limit) {
  std::size_t moved = 0;
  const status s = guarded(path_, "folding staged rows", [&] {
    auto& sel = *impl_->fold_select;
    sel.reset();
    sel.bind(1, static_cast<std::int64_t>(
                    std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max())));
    sel.bind(2, current);
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

status sqlite_rows_store::commit() {
  return impl_->tx.commit(impl_->db, path_);
}

void sqlite_rows_store::rollback() noexcept {
  if (impl_) impl_->tx.rollback(impl_->db);
}

}  // namespace loopguard::daemon
