#include "state/sequence_ledger.hpp"

#include <algorithm>
#include <cassert>

namespace loopguard::daemon {

std::uint64_t sequence_ledger::applied(const worker_identity& id) const {
  const auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.applied;
}

std::uint64_t sequence_ledger::durable(const worker_identity& id) const {
  const auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.durable;
}

void sequence_ledger::advance(const worker_identity& id, std::uint64_t seq) {
  auto [it, inserted] = entries_.try_emplace(id);
  assert(seq >= it->second.applied);  // sequence numbers never go back
  it->second.applied = seq;
  if (!it->second.changed) {
    it->second.changed = true;
    changed_.push_back(&it->first);  // std::map keys are stable
  }
}

status sequence_ledger::declare_gap(const worker_identity& id, std::uint64_t from,
                                    std::uint64_t to) {
  const std::uint64_t next = applied(id) + 1;
  if (from == 0 || to < from) {
    return status::error("gap from " + std::to_string(from) + " to " + std::to_string(to) +
                         " is not a range of sequence numbers");
  }
  if (from > next) {
    return status::error("gap starts at " + std::to_string(from) +
                         " but the next expected sequence number is " + std::to_string(next) +
                         ": events " + std::to_string(next) + ".." + std::to_string(from - 1) +
                         " were neither sent nor declared lost");
  }
  if (to >= next) advance(id, to);
  return {};
}

std::vector<sequence_row> sequence_ledger::take_changes() {
  std::vector<sequence_row> out;
  out.reserve(changed_.size());
  for (const auto* key : changed_) {
    entry& e = entries_.at(*key);
    e.changed = false;
    out.push_back({*key, e.applied, 0});
  }
  changed_.clear();
  return out;
}

void sequence_ledger::mark_durable(const std::vector<sequence_row>& rows) {
  for (const auto& r : rows) {
    // An incarnation expired since the checkpoint was taken stays forgotten.
    const auto it = entries_.find(r.id);
    if (it != entries_.end()) it->second.durable = std::max(it->second.durable, r.seq);
  }
}

void sequence_ledger::erase(const worker_identity& id) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.changed) std::erase(changed_, &it->first);
  entries_.erase(it);
}

std::vector<sequence_row> sequence_ledger::rows() const {
  std::vector<sequence_row> out;
  for (const auto& [id, e] : entries_) out.push_back({id, e.applied, 0});
  return out;
}

void sequence_ledger::restore(const std::vector<sequence_row>& rows) {
  entries_.clear();
  changed_.clear();
  for (const auto& r : rows) {
    if (r.seq > 0) entries_[r.id] = entry{r.seq, r.seq, false};
  }
}

}  // namespace loopguard::daemon
