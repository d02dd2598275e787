// Fingerprint rows on their way into a restore. A restore runs on two threads
// (docs/performance.md, "The restore's two threads"): the loading one reads and decodes rows and
// adds them here, which reads no state; the state's thread takes whole batches
// (shared_economics_state::restore_fingerprints). The work is split so that neither waits for
// the other: a row called once (most rows) is held as its few fields, its tool and summary in
// the batch's bytes, and the restoring thread checks their UTF-8 and makes the entry; any other
// row is held as its stats, repaired already.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "state/fingerprint_entry.hpp"
#include "state/state_rows.hpp"

namespace loopguard::daemon {

class shared_economics_state;

class restore_batch {
 public:
  // Takes the row's stats (it may move from them); its swarm and key are copied. Stored strings
  // that are not valid UTF-8 are repaired (utf8::repair), here or when the entry is made.
  void add(fingerprint_row& row);
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  // Replacements made in strings that were not valid UTF-8 since the last clear(), by add() and
  // by the restore of the batch; a row's swarm name counts for every row, as its tool does.
  std::size_t repaired() const { return repaired_; }
  void clear();  // keeps the memory for the next batch

 private:
  friend class shared_economics_state;
  static constexpr std::uint32_t kNotFull = UINT32_MAX;
  // A row called once: its entry without the label, whose strings are in bytes_.
  struct item {
    fingerprint_key key;
    single_call_entry small;   // unlabelled
    std::size_t label_at = 0;  // the tool's offset in bytes_, the summary right after it
    std::uint32_t tool_size = 0;
    std::uint32_t summary_size = 0;
    std::uint32_t full = kNotFull;  // its index in fulls_; kNotFull: `small` holds it
  };
  // Consecutive rows of one swarm: the items up to `end` (from the previous run's end).
  struct run {
    std::string given;  // the name as stored
    std::string swarm;  // repaired
    std::size_t end = 0;
    std::size_t repaired = 0;  // replacements in the name, counted again for each of its rows
  };
  // The small form of an item, taken out of it (its tool and summary checked, repaired if need
  // be, as its label).
  single_call_entry entry(item& it);

  std::vector<item> items_;
  std::vector<fingerprint_stats> fulls_;
  std::vector<run> runs_;
  std::string bytes_;
  std::size_t repaired_ = 0;
};

}  // namespace loopguard::daemon
