// The order in which a compaction in chunks stages its change set (docs/storage.md, "Staged in
// key order"): the key order of the `fingerprints` table, so that the fold, which moves staged
// rows in `staged.id` order, rewrites neighbouring B-tree pages one after the other instead of
// one page per row at random places.
//
// The change set is taken in parts (group_committer); each part is sorted when taken
// (sort_part), and staging_order merges the sorted parts lazily, a batch per group commit.
// A fingerprint in several parts comes out once: the entry (row or erasure) of the latest part,
// the one that describes the state at the boundary. Pure: no I/O, no lock.
#pragma once

#include <cstddef>
#include <vector>

#include "state/state_rows.hpp"

namespace loopguard::daemon {

// The `fingerprints` table's key order: swarm (bytes), kind, fp as a signed 64-bit integer
// (how the store binds it).
bool store_key_less(const std::string& swarm_a, fingerprint_key a, const std::string& swarm_b,
                    fingerprint_key b);

// Sorts a part's erasures and rows, each list on its own, in store_key_less order.
void sort_part(state_changes& part);

// One batch to stage: every key at most once, so the order between its erasures and its rows
// does not matter. Points into the parts given to staging_order::reset.
struct staging_batch {
  std::vector<const fingerprint_ref*> erased;
  std::vector<const fingerprint_row*> rows;
  std::size_t size() const { return erased.size() + rows.size(); }
  bool empty() const { return size() == 0; }
};

class staging_order {
 public:
  // Starts a merge of `parts` (each sorted by sort_part, taken oldest first). The parts must
  // outlive the merge and stay unchanged.
  void reset(const std::vector<state_changes>& parts);
  // The next `limit` fingerprints (fewer at the end) in key order.
  staging_batch next(std::size_t limit);
  bool done() const { return heap_.empty(); }

 private:
  struct cursor {
    std::size_t erased = 0, rows = 0;  // the next entry of each list
  };
  // The part's next entry: its swarm and key, and whether it is an erasure.
  struct head {
    const std::string* swarm;
    fingerprint_key key;
    bool erased;
  };
  head head_of(std::size_t part) const;
  bool exhausted(std::size_t part) const;
  bool after(std::size_t a, std::size_t b) const;  // heap order: a's head after b's
  const std::vector<state_changes>* parts_ = nullptr;
  std::vector<cursor> cursors_;
  std::vector<std::size_t> heap_;  // parts with entries left, min-heap by (head key, part)
};

}  // namespace loopguard::daemon
