// What the two SQLite files of a checkpoint database share (docs/storage.md, "Files"): the checks
// a file must pass before it is opened, the connection settings, and how a failed step becomes a
// status naming the step and the file. Used by sqlite_checkpoint_store (the main file) and
// sqlite_rows_store (the rows file beside it).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "loopguard/status.hpp"

namespace loopguard::daemon::sqlite_file {

constexpr int kApplicationId = 0x4C475244;  // "LGRD"
constexpr int kOldestReadableVersion = 2;   // version 1 had no log; no such file was deployed
constexpr const char* kMemory = ":memory:";
// Above this size open() skips PRAGMA quick_check: the load reads and decodes every page of
// every table anyway (a damaged page fails it), and the check would add ~25% to a restore.
constexpr std::uintmax_t kQuickCheckMaxBytes = std::uintmax_t{64} << 20;

inline std::int64_t as_int(std::uint64_t v) {
  return std::bit_cast<std::int64_t>(v);
}
inline std::uint64_t as_uint(std::int64_t v) {
  return std::bit_cast<std::uint64_t>(v);
}
inline void bind_blob(SQLite::Statement& st, int index, std::string_view blob) {
  st.bindNoCopy(index, blob.data(), static_cast<int>(blob.size()));
}
inline std::string_view blob_of(const SQLite::Column& c) {
  return {static_cast<const char*>(c.getBlob()), static_cast<std::size_t>(c.getBytes())};
}

// Runs one step; an exception becomes a status naming the step and the file.
template <class F>
status guarded(const std::string& path, const char* step, F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return status::error(std::string(step) + " failed on " + path + ": " + e.what());
  }
}

// "refusing PATH: WHY; the file was not modified".
status refusal(const std::string& path, const std::string& why);

// A file that exists and is not empty (":memory:" never does).
bool exists(const std::string& path);

// Refuses a non-empty file that does not begin with SQLite's header.
status check_header(const std::string& path);

// Refuses a database whose application id or schema version is not ours to open; `newest` is
// the newest version this build reads.
status check_version(const std::string& path, int app, int version, int tables, int newest);

// Whether open() runs PRAGMA quick_check: wanted, the file has tables and is at most
// `max_bytes` (above that the load reads and decodes every page anyway).
bool quick_check_due(const std::string& path, bool wanted, int tables, std::uintmax_t max_bytes);

// WAL, synchronous=FULL, exclusive locking, secure_delete=FAST, the page cache and the WAL's
// checkpoint interval; refuses a database that cannot take them. An in-memory database keeps its
// "memory" journal.
status configure(SQLite::Database& db, const std::string& path, int cache_kib,
                 int wal_autocheckpoint_pages);

// One connection's write transaction: BEGIN IMMEDIATE, COMMIT, ROLLBACK, and whether one is open
// (so that a rollback after a failed COMMIT, which SQLite already rolled back, is a no-op).
class transaction {
 public:
  status begin(SQLite::Database& db, const std::string& path);
  status commit(SQLite::Database& db, const std::string& path);
  void rollback(SQLite::Database& db) noexcept;

 private:
  bool open_ = false;
};

// The refusal for an exception thrown while opening `path` (a full disk, another process
// holding the file, or a file that is not a loopguard database); `db` may be null.
status open_refusal(const std::string& path, const SQLite::Exception& e, SQLite::Database* db);

}  // namespace loopguard::daemon::sqlite_file
