#include "store/sqlite_file.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace loopguard::daemon::sqlite_file {

status refusal(const std::string& path, const std::string& why) {
  return status::error("refusing " + path + ": " + why + "; the file was not modified");
}

bool exists(const std::string& path) {
  std::error_code ec;
  return path != kMemory && std::filesystem::exists(path, ec) &&
         std::filesystem::file_size(path, ec) > 0 && !ec;
}

status check_header(const std::string& path) {
  if (!exists(path)) return {};  // a new database
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  if (!in || std::memcmp(header, "SQLite format 3", 16) != 0) {
    return refusal(path, "not a SQLite database (bad file header)");
  }
  return {};
}

status check_version(const std::string& path, int app, int version, int tables, int newest) {
  if (app != 0 && app != kApplicationId) {
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

bool quick_check_due(const std::string& path, bool wanted, int tables, std::uintmax_t max_bytes) {
  if (!wanted || tables == 0) return false;
  std::error_code size_error;
  const auto bytes = std::filesystem::file_size(path, size_error);
  return size_error || bytes <= max_bytes;
}

status configure(SQLite::Database& db, const std::string& path, int cache_kib,
                 int wal_autocheckpoint_pages) {
  db.exec("PRAGMA locking_mode = EXCLUSIVE");
  const std::string mode = db.execAndGet("PRAGMA journal_mode = WAL").getString();
  const char* file = sqlite3_db_filename(db.getHandle(), "main");
  const bool in_memory = file == nullptr || *file == '\0';
  if (mode != "wal" && !(in_memory && mode == "memory")) {
    return refusal(path, "cannot switch it to WAL mode (journal_mode is " + mode + ")");
  }
  db.exec("PRAGMA synchronous = FULL");
  // Debian's SQLite zeroes deleted content by default (SQLITE_SECURE_DELETE), freed pages
  // included: every trimmed log record was written a second time, as zeros, into the WAL the
  // acks' commits fsync. FAST zeroes only within pages written anyway (docs/storage.md).
  db.exec("PRAGMA secure_delete = FAST");
  db.exec("PRAGMA cache_size = " + std::to_string(-cache_kib));
  db.exec("PRAGMA wal_autocheckpoint = " + std::to_string(wal_autocheckpoint_pages));
  return {};
}

status transaction::begin(SQLite::Database& db, const std::string& path) {
  return guarded(path, "BEGIN", [&] {
    db.exec("BEGIN IMMEDIATE");
    open_ = true;
  });
}

status transaction::commit(SQLite::Database& db, const std::string& path) {
  return guarded(path, "COMMIT", [&] {
    db.exec("COMMIT");
    open_ = false;
  });
}

void transaction::rollback(SQLite::Database& db) noexcept {
  if (!open_) return;
  open_ = false;
  try {
    db.exec("ROLLBACK");
  } catch (const std::exception&) {
    // SQLite already rolled back (e.g. after a failed COMMIT): nothing is left to undo.
  }
}

status open_refusal(const std::string& path, const SQLite::Exception& e, SQLite::Database* db) {
  // A full disk is not a damaged file: opening may need space (to recover the WAL, to
  // migrate), and the remedy is space, not a repair.
  const bool no_space = e.getErrorCode() == SQLITE_FULL ||
                        (db != nullptr && sqlite3_system_errno(db->getHandle()) == ENOSPC);
  if (no_space) {
    return refusal(path, std::string("the disk is full (") + e.what() +
                             "): free space on its file system and start again");
  }
  if (e.getErrorCode() == SQLITE_BUSY || e.getErrorCode() == SQLITE_LOCKED) {
    return refusal(path, std::string("another process holds it (") + e.what() +
                             "): a running loopguardd locks its database; stop it first");
  }
  return refusal(path, std::string("cannot open it as a loopguard database (") + e.what() + ")");
}

}  // namespace loopguard::daemon::sqlite_file
