#include "service/staging_order.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace loopguard::daemon {

bool store_key_less(const std::string& swarm_a, fingerprint_key a, const std::string& swarm_b,
                    fingerprint_key b) {
  if (const int c = swarm_a.compare(swarm_b); c != 0) return c < 0;
  if (a.kind != b.kind) return static_cast<int>(a.kind) < static_cast<int>(b.kind);
  return std::bit_cast<std::int64_t>(a.value) < std::bit_cast<std::int64_t>(b.value);
}

void sort_part(state_changes& part) {
  std::sort(part.erased.begin(), part.erased.end(), [](const auto& x, const auto& y) {
    return store_key_less(x.swarm, x.key, y.swarm, y.key);
  });
  std::sort(part.fingerprints.begin(), part.fingerprints.end(), [](const auto& x, const auto& y) {
    return store_key_less(x.swarm, x.key, y.swarm, y.key);
  });
}

bool staging_order::exhausted(std::size_t part) const {
  const state_changes& p = (*parts_)[part];
  const cursor& c = cursors_[part];
  return c.erased >= p.erased.size() && c.rows >= p.fingerprints.size();
}

staging_order::head staging_order::head_of(std::size_t part) const {
  const state_changes& p = (*parts_)[part];
  const cursor& c = cursors_[part];
  const bool has_erased = c.erased < p.erased.size();
  const bool has_row = c.rows < p.fingerprints.size();
  if (has_erased && has_row) {
    const fingerprint_ref& e = p.erased[c.erased];
    const fingerprint_row& r = p.fingerprints[c.rows];
    if (store_key_less(e.swarm, e.key, r.swarm, r.key)) return {&e.swarm, e.key, true};
    return {&r.swarm, r.key, false};
  }
  if (has_erased) return {&p.erased[c.erased].swarm, p.erased[c.erased].key, true};
  return {&p.fingerprints[c.rows].swarm, p.fingerprints[c.rows].key, false};
}

bool staging_order::after(std::size_t a, std::size_t b) const {
  const head x = head_of(a), y = head_of(b);
  if (store_key_less(*x.swarm, x.key, *y.swarm, y.key)) return false;
  if (store_key_less(*y.swarm, y.key, *x.swarm, x.key)) return true;
  return a > b;  // the same key: the older part first
}

void staging_order::reset(const std::vector<state_changes>& parts) {
  parts_ = &parts;
  cursors_.assign(parts.size(), cursor{});
  heap_.clear();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!exhausted(i)) heap_.push_back(i);
  }
  const auto cmp = [this](std::size_t a, std::size_t b) { return after(a, b); };
  std::make_heap(heap_.begin(), heap_.end(), cmp);
}

staging_batch staging_order::next(std::size_t limit) {
  staging_batch out;
  const auto cmp = [this](std::size_t a, std::size_t b) { return after(a, b); };
  // Pops the smallest entry and advances its part; returns its part and head.
  const auto pop = [&]() {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    const std::size_t part = heap_.back();
    heap_.pop_back();
    const head h = head_of(part);
    struct popped {
      std::size_t part;
      head h;
      std::size_t index;
    } p{part, h, h.erased ? cursors_[part].erased++ : cursors_[part].rows++};
    if (!exhausted(part)) {
      heap_.push_back(part);
      std::push_heap(heap_.begin(), heap_.end(), cmp);
    }
    return p;
  };
  while (out.size() < limit && !heap_.empty()) {
    auto latest = pop();
    // The same fingerprint in later parts: their entries come next (ties go oldest first);
    // the last one wins.
    while (!heap_.empty()) {
      const head h = head_of(heap_.front());
      if (*h.swarm != *latest.h.swarm || h.key != latest.h.key) break;
      latest = pop();
    }
    const state_changes& p = (*parts_)[latest.part];
    if (latest.h.erased) {
      out.erased.push_back(&p.erased[latest.index]);
    } else {
      out.rows.push_back(&p.fingerprints[latest.index]);
    }
  }
  return out;
}

}  // namespace loopguard::daemon
