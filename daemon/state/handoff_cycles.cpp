#include "state/handoff_cycles.hpp"

#include <xxhash.h>

#include <algorithm>
#include <tuple>

namespace loopguard::daemon {
namespace {

struct triple {
  const std::string* from;
  const std::string* peer;
  std::uint64_t fingerprint;
  bool operator==(const triple& o) const {
    return fingerprint == o.fingerprint && *from == *o.from && *peer == *o.peer;
  }
};

triple of(const handoff& h) {
  return {&h.from, &h.peer, h.fingerprint};
}

// Walks back from `ring.back()` (the hand-off e[end - 1]), one distinct earlier hand-off *to*
// the current sender at a time (most recent first), until it comes back to that hand-off's own
// kind: the ring, newest last. Depth-first, at most `max_period` hand-offs deep.
bool close_ring(const std::deque<handoff>& e, std::size_t end, std::vector<triple>& ring,
                std::size_t max_period) {
  if (ring.size() > max_period) return false;
  const triple current = ring.front();  // the ring is built backwards, at the front
  std::vector<triple> tried;
  for (std::size_t k = end - 1; k-- > 0;) {
    const triple t = of(e[k]);
    if (*t.peer != *current.from) continue;
    if (std::find(tried.begin(), tried.end(), t) != tried.end()) continue;
    tried.push_back(t);
    if (t == ring.back()) return ring.size() >= 2;  // closed (ring.back(): the newest)
    if (std::find(ring.begin(), ring.end(), t) != ring.end()) continue;  // a loop inside
    ring.insert(ring.begin(), t);
    if (close_ring(e, end, ring, max_period)) return true;
    ring.erase(ring.begin());
  }
  return false;
}

// XXH3 over the ring read from its smallest hand-off, so every rotation has one key.
std::uint64_t ring_key(const std::vector<triple>& ring) {
  const auto less = [](const triple& a, const triple& b) {
    return std::tie(*a.from, *a.peer, a.fingerprint) < std::tie(*b.from, *b.peer, b.fingerprint);
  };
  const std::size_t start =
      static_cast<std::size_t>(std::min_element(ring.begin(), ring.end(), less) - ring.begin());
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (std::size_t k = 0; k < ring.size(); ++k) {
    const triple& t = ring[(start + k) % ring.size()];
    for (const std::string* s : {t.from, t.peer}) {
      const std::uint64_t n = s->size();
      XXH3_64bits_update(st, &n, sizeof n);
      XXH3_64bits_update(st, s->data(), s->size());
    }
    XXH3_64bits_update(st, &t.fingerprint, sizeof t.fingerprint);
  }
  const std::uint64_t key = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return key;
}

}  // namespace

std::uint64_t handoff_fingerprint(std::uint64_t structural, std::string_view peer) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(structural >> (8 * i));
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, b, sizeof b);
  XXH3_64bits_update(st, peer.data(), peer.size());
  const std::uint64_t fp = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return fp;
}

void handoff_log::add(handoff h) {
  // Usually the newest: found at once from the back.
  auto pos = entries_.end();
  while (pos != entries_.begin() && std::prev(pos)->t > h.t) --pos;
  entries_.insert(pos, std::move(h));
  while (entries_.size() > kMaxKept) entries_.pop_front();
}

void handoff_log::assign(std::vector<handoff> entries) {
  entries_.assign(std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
  while (entries_.size() > kMaxKept) entries_.pop_front();
}

namespace {

// The ring e[end - 1] closes, and how long the hand-offs of that ring (others ignored:
// unrelated work handed around meanwhile) had gone around it in order by then.
std::optional<handoff_cycle> cycle_ending_at(const std::deque<handoff>& e, std::size_t end,
                                             std::uint32_t max_period) {
  if (end < 4) return std::nullopt;
  std::vector<triple> ring{of(e[end - 1])};
  if (!close_ring(e, end, ring, max_period)) return std::nullopt;
  std::vector<std::size_t> members;  // indexes of the ring's hand-offs, oldest first
  for (std::size_t k = 0; k < end; ++k) {
    if (std::find(ring.begin(), ring.end(), of(e[k])) != ring.end()) members.push_back(k);
  }
  const std::size_t p = ring.size(), n = members.size();
  std::size_t run = 0;  // how far back each member repeats the one p before it
  while (run + p < n && of(e[members[n - 1 - run]]) == of(e[members[n - 1 - run - p]])) ++run;
  if (run < p) return std::nullopt;      // not once around again
  for (std::size_t k = 0; k < p; ++k) {  // the last round is the ring, in its order
    if (!(of(e[members[n - p + k]]) == ring[k])) return std::nullopt;
  }
  handoff_cycle c;
  c.key = ring_key(ring);
  c.period = static_cast<std::uint32_t>(p);
  c.calls = static_cast<std::uint32_t>(run + p);
  c.rounds = c.calls / c.period;
  for (const triple& t : ring) c.workers.push_back(*t.from);
  for (std::size_t k = n - c.calls; k < n; ++k) c.spent += e[members[k]].spent;
  c.tool = e[end - 1].tool;
  c.t = e[end - 1].t;
  return c;
}

}  // namespace

// The newest ring still going on: closed by one of the last kLookback hand-offs, with no
// hand-off after it sent by a worker of the ring (a worker of the ring that hands anything
// else on has moved on; hand-offs among other workers do not matter to it).
std::optional<handoff_cycle> handoff_log::current_cycle(std::uint32_t max_period) const {
  const std::deque<handoff>& e = entries_;
  for (std::size_t back = 0; back < kLookback && back < e.size(); ++back) {
    const std::size_t end = e.size() - back;
    auto c = cycle_ending_at(e, end, max_period);
    if (!c) continue;
    const bool moved_on =
        std::any_of(e.begin() + static_cast<std::ptrdiff_t>(end), e.end(), [&](const handoff& h) {
          return std::find(c->workers.begin(), c->workers.end(), h.from) != c->workers.end();
        });
    if (!moved_on) return c;
  }
  return std::nullopt;
}

}  // namespace loopguard::daemon
