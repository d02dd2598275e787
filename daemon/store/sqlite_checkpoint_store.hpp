// The checkpoint store on SQLite (docs/storage.md): WAL, synchronous=FULL, schema version in
// PRAGMA user_version, our application_id, exclusive locking (one daemon per file). Two files:
// the main one (swarms, workers, the log, sequence numbers, retention, the compaction's state)
// and the rows file beside it (sqlite_rows_store: the fingerprint rows), which it opens with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "store/checkpoint_store.hpp"
#include "store/sqlite_file.hpp"
#include "store/sqlite_rows_store.hpp"

namespace loopguard::daemon {

class sqlite_checkpoint_store final : public checkpoint_store {
 public:
  static constexpr int kSchemaVersion = 8;
  static constexpr int kApplicationId = sqlite_file::kApplicationId;  // "LGRD"

  // Above this size open() skips PRAGMA quick_check (of either file): load_streaming() reads and
  // decodes every page of every table anyway (a damaged page fails it), and the check would add
  // ~25% to a restore.
  static constexpr std::uintmax_t kQuickCheckMaxBytes = sqlite_file::kQuickCheckMaxBytes;

  struct options {
    bool quick_check = true;  // run PRAGMA quick_check on open (files up to kQuickCheckMaxBytes)
  };

  // Opens or creates `path` and its rows file `path-rows`. Refuses, with a message naming the
  // file and the reason, a file that is not SQLite, a SQLite file of another application, one
  // with a newer schema, a corrupted one, a missing rows file or one of another database; a
  // refused file is left exactly as it was. Takes the main file's exclusive lock and holds it
  // until the store is closed (locking_mode EXCLUSIVE): a file another process has open, even an
  // idle daemon that has only read it, is refused ("another process holds it"), which the offline
  // commands rely on (docs/scaling.md, "Moving a swarm"). ":memory:" opens a new database in
  // memory, rows file included (no WAL there; the tests use it where a file is not the point).
  static result<std::unique_ptr<sqlite_checkpoint_store>> open(const std::string& path,
                                                               options opts);
  static result<std::unique_ptr<sqlite_checkpoint_store>> open(const std::string& path) {
    return open(path, options{});
  }
  ~sqlite_checkpoint_store() override;

  result<stored_state> load_streaming(const fingerprint_sink& sink) override;
  status begin() override;
  status clear_swarm(std::string_view swarm) override;
  status put_swarm(const swarm_row& row) override;
  status put_worker(const worker_row& row) override;
  status put_sequence(const sequence_row& row) override;
  status erase_sequence(const worker_identity& id) override;
  status put_seen(const seen_row& row) override;
  status put_expired(const expired_row& row) override;
  status erase_expired(const worker_identity& id) override;
  status erase_swarm_seen(std::string_view swarm) override;
  status put_swarm_seen(const swarm_seen_row& row) override;
  status truncate_log() override;
  status append_log(std::string_view record) override;
  result<std::int64_t> log_end() override;
  status flip(std::int64_t generation, std::int64_t boundary) override;
  result<log_trim> trim_log(std::size_t max_bytes) override;
  result<std::int64_t> generation() override;
  rows_store& rows() override;
  status commit() override;
  void rollback() noexcept override;

  const std::string& path() const { return path_; }
  // The schema version open() migrated the file from; 0: it was new or current.
  int migrated_from() const { return migrated_from_; }

 private:
  struct impl;
  sqlite_checkpoint_store(std::string path, std::unique_ptr<impl> p, int migrated_from);
  int migrated_from_ = 0;
  std::string path_;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard::daemon
