// The rows file on SQLite (docs/storage.md, "The rows file"): `DB-rows` beside the main file
// `DB`, with its own connection, WAL and exclusive lock, written by the compaction's worker
// thread while the checkpointer commits to the main file. It names the main file it belongs to
// (a random pair id stored in both), so a rows file from another database is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "store/rows_store.hpp"

namespace loopguard::daemon {

class sqlite_rows_store final : public rows_store {
 public:
  // Its own version: 7, the main file's schema that introduced it. Schema 8 changed only the
  // encoding of the blobs, which the main file's version guards (an older build refuses that).
  static constexpr int kSchemaVersion = 7;

  // The rows file of the main file `main_path` (":memory:" for an in-memory one).
  static std::string path_for(const std::string& main_path);

  // Creates the rows file at `path` (which must not exist) for the main file whose pair id is
  // `pair`, empty. ":memory:" creates one in memory.
  static result<std::unique_ptr<sqlite_rows_store>> create(const std::string& path,
                                                           std::int64_t pair);
  // Opens an existing rows file, refusing (naming the file and the reason) one that is not ours,
  // of another schema, corrupted (quick_check, when `quick_check`), or paired with another main
  // file than `pair`.
  static result<std::unique_ptr<sqlite_rows_store>> open(const std::string& path, std::int64_t pair,
                                                         bool quick_check);
  ~sqlite_rows_store() override;

  status load(std::int64_t generation, const fingerprint_sink& sink) override;
  status begin() override;
  status stage_fingerprint(std::int64_t generation, const fingerprint_row& row) override;
  status stage_erase(std::int64_t generation, const fingerprint_ref& ref) override;
  status stage_clear(std::int64_t generation, std::string_view swarm) override;
  result<std::size_t> fold_staged(std::int64_t current, std::size_t limit) override;
  status commit() override;
  void rollback() noexcept override;

  const std::string& path() const { return path_; }

 private:
  struct impl;
  sqlite_rows_store(std::string path, std::unique_ptr<impl> p);
  struct overlay;
  overlay load_overlay(std::int64_t generation);
  void load_fingerprints(const fingerprint_sink& sink, overlay& over);
  std::string path_;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard::daemon
