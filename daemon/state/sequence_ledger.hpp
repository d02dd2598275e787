// The last applied sequence number of every worker incarnation: what makes a resent event
// count exactly once. Pure; persisted in the same checkpoint transaction as the counts.
//
// Thread-safety: none; the daemon keeps it behind the same mutex as the swarm state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loopguard/status.hpp"

namespace loopguard::daemon {

struct worker_identity {
  std::string swarm, worker, incarnation;
  friend auto operator<=>(const worker_identity&, const worker_identity&) = default;
};

struct sequence_row {
  worker_identity id;
  std::uint64_t seq = 0;  // every event up to and including it was applied (or declared lost)
  // Its last activity by the daemon's wall clock (idle_tracker), filled in by the checkpoint
  // and the store; 0 elsewhere (the ledger does not keep it).
  double seen = 0;
  friend bool operator==(const sequence_row&, const sequence_row&) = default;
};

class sequence_ledger {
 public:
  // Highest sequence number applied in memory / known durable. 0 for an unknown identity.
  std::uint64_t applied(const worker_identity& id) const;
  std::uint64_t durable(const worker_identity& id) const;

  // Records that every event up to `seq` is applied; `seq` must not be below applied(id).
  void advance(const worker_identity& id, std::uint64_t seq);

  // The worker dropped from..to. Allowed when from <= applied + 1 <= to + 1 (a declaration may
  // overlap what was applied); else an error saying why (the protocol's `bad_gap`).
  status declare_gap(const worker_identity& id, std::uint64_t from, std::uint64_t to);

  // Rows advanced since the last call; mark_durable() once the checkpoint holding them commits.
  std::vector<sequence_row> take_changes();
  void mark_durable(const std::vector<sequence_row>& rows);

  // Retention: forgets `id` (its row is deleted by the same checkpoint).
  void erase(const worker_identity& id);

  std::vector<sequence_row> rows() const;
  void restore(const std::vector<sequence_row>& rows);  // applied = durable = row.seq
  std::size_t size() const { return entries_.size(); }

 private:
  struct entry {
    std::uint64_t applied = 0;
    std::uint64_t durable = 0;
    bool changed = false;
  };
  std::map<worker_identity, entry, std::less<>> entries_;
  std::vector<const worker_identity*> changed_;  // keys of entries with changed == true
};

}  // namespace loopguard::daemon
