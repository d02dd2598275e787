// The read side of shared_economics_state: digests, API views, checkpoint rows.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_set>

#include "state/shared_economics_state.hpp"

namespace loopguard::daemon {
namespace {

// Feeds values into XXH3 in a fixed byte order, so a digest means the same on every host.
class digest_writer {
 public:
  digest_writer() { XXH3_64bits_reset(state_); }
  ~digest_writer() { XXH3_freeState(state_); }
  digest_writer(const digest_writer&) = delete;
  digest_writer& operator=(const digest_writer&) = delete;

  void u64(std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    XXH3_64bits_update(state_, b, sizeof b);
  }
  void f64(double v) {
    std::uint64_t bits = 0;
    if (v == 0) v = 0;  // -0 and 0 are the same time
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void str(std::string_view s) {
    u64(s.size());
    XXH3_64bits_update(state_, s.data(), s.size());
  }
  std::uint64_t done() { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_ = XXH3_createState();
};

}  // namespace

std::uint64_t shared_economics_state::digest_of(std::string_view name, const swarm& s) const {
  std::vector<fingerprint_key> keys;
  keys.reserve(s.fingerprints.size());
  s.fingerprints.for_each([&](const fingerprint_key& key, const auto&) { keys.push_back(key); });
  std::sort(keys.begin(), keys.end());
  digest_writer w;
  w.str("loopguard-swarm-digest-v2");
  w.str(name);
  w.u64(s.spent.tokens);
  w.f64(s.spent.amount);
  w.u64(s.wasted.tokens);
  w.f64(s.wasted.amount);
  w.u64(s.handoffs.entries().size());
  for (const handoff& h : s.handoffs.entries()) {
    w.f64(h.t);
    w.str(h.from);
    w.str(h.peer);
    w.u64(h.fingerprint);
    w.u64(h.spent.tokens);
    w.f64(h.spent.amount);
  }
  w.u64(keys.size());
  std::vector<std::string_view> names;
  for (const fingerprint_key& key : keys) {
    fingerprint_stats f;  // either form, as its row
    s.fingerprints.visit(key, [&](const fingerprint_key&, const auto& e) { f = e.row(); });
    w.u64(static_cast<std::uint64_t>(key.kind));
    w.u64(key.value);
    w.str(f.tool);
    w.u64(f.calls);
    w.u64(f.counted);
    w.f64(f.first_seen);
    w.f64(f.last_seen);
    w.u64(static_cast<std::uint64_t>(f.level));
    w.u64(f.wasted.tokens);
    w.f64(f.wasted.amount);
    w.u64(f.booked.tokens);
    w.f64(f.booked.amount);
    // Worker names, not indexes: indexes depend on arrival order.
    names.clear();
    for (auto id : f.workers) names.push_back(s.worker_names[id]);
    std::sort(names.begin(), names.end());
    w.u64(names.size());
    for (auto n : names) w.str(n);
  }
  return w.done();
}

std::uint64_t shared_economics_state::digest(std::string_view name) const {
  const auto it = swarms_.find(name);
  return it == swarms_.end() ? 0 : digest_of(name, it->second);
}

std::uint64_t shared_economics_state::digest() const {
  digest_writer w;
  w.str("loopguard-state-digest-v1");
  for (const auto& [name, s] : swarms_) {  // std::map: sorted by name
    w.str(name);
    w.u64(digest_of(name, s));
  }
  return w.done();
}

namespace {

// The top view's order: counted calls, then calls, then the key (a total order). A template
// because its one argument type, shared_economics_state::top_slot, is private.
template <class Slot>
bool hotter(const Slot& a, const Slot& b) {
  if (a.counted != b.counted) return a.counted > b.counted;
  if (a.calls != b.calls) return a.calls > b.calls;
  return a.key < b.key;
}

}  // namespace

// The top view holds the kTopKept hottest fingerprints. Counts only grow, so a fingerprint
// outside it can enter only when its own counts grow, i.e. when rank() sees it; only an erased
// member (eviction) leaves a hole, which rebuild_top() fills from every fingerprint.
template <class E>
void shared_economics_state::rank(swarm& s, const fingerprint_key& key, E& f) {
  const top_slot mine{key, f.counted, f.calls};
  auto& top = s.top;
  std::size_t i = 0;
  if (f.in_top) {
    while (top[i].key != key) ++i;
    top[i] = mine;
  } else {
    if (top.size() == kTopKept && !hotter(mine, top.back())) return;
    if (top.size() == kTopKept) {
      s.fingerprints.visit(top.back().key,
                           [](const fingerprint_key&, auto& out) { out.in_top = false; });
      top.pop_back();
    }
    top.push_back(mine);
    f.in_top = true;
    i = top.size() - 1;
  }
  for (; i > 0 && hotter(top[i], top[i - 1]); --i) std::swap(top[i], top[i - 1]);
}

template <class E>
void shared_economics_state::account(swarm& s, const fingerprint_key& key, E& f) const {
  if (key.kind == fingerprint_kind::exact) s.exact_calls += f.calls;
  if constexpr (std::is_same_v<E, entry>) {
    if (f.level != severity::none) {
      s.declared.insert(key);
      // Never later than where the uninterrupted state has it queued (lift_time()).
      if (options_.lift_verdicts && !f.queued()) schedule(s, key, f);
    }
  }
  rank(s, key, f);
}

template <class E>
bool shared_economics_state::forget(swarm& s, const fingerprint_key& key, const E& f) {
  if (key.kind == fingerprint_kind::exact) s.exact_calls -= f.calls;
  if (f.level != severity::none) s.declared.erase(key);
  if (!f.in_top) return false;
  std::erase_if(s.top, [&](const top_slot& t) { return t.key == key; });
  return true;
}

void shared_economics_state::rebuild_top(swarm& s) {
  s.top.clear();
  s.fingerprints.for_each([](const fingerprint_key&, auto& f) { f.in_top = false; });
  s.fingerprints.for_each([&](const fingerprint_key& key, auto& f) { rank(s, key, f); });
}

// The forms of a fingerprint (touch() and the eviction in shared_economics_state.cpp use these).
template void shared_economics_state::rank(swarm&, const fingerprint_key&, entry&);
template void shared_economics_state::rank(swarm&, const fingerprint_key&, single&);
template bool shared_economics_state::forget(swarm&, const fingerprint_key&, const entry&);
template bool shared_economics_state::forget(swarm&, const fingerprint_key&, const single&);

std::optional<swarm_summary> shared_economics_state::summary(std::string_view name) const {
  const auto it = swarms_.find(name);
  if (it == swarms_.end()) return std::nullopt;
  const swarm& s = it->second;
  const std::size_t verdicts = s.declared.size() + (s.budget_level != severity::none ? 1 : 0) +
                               (s.cycle_level != severity::none ? 1 : 0);
  return swarm_summary{it->first,
                       s.fingerprints.size(),
                       s.worker_names.size(),
                       verdicts,
                       s.exact_calls,
                       s.spent,
                       s.wasted,
                       rules_.budget.of(it->first).unit,
                       s.budget_level,
                       budget_used(it->first, s),
                       s.expired};
}

std::vector<swarm_summary> shared_economics_state::swarms() const {
  std::vector<swarm_summary> out;
  out.reserve(swarms_.size());
  for (const auto& kv : swarms_) out.push_back(*summary(kv.first));
  return out;
}

std::vector<std::string> shared_economics_state::worker_names(std::string_view name) const {
  const auto it = swarms_.find(name);
  if (it == swarms_.end()) return {};
  auto out = it->second.worker_names;
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fingerprint_row> shared_economics_state::top_fingerprints(std::string_view name,
                                                                      std::size_t n) const {
  const auto it = swarms_.find(name);
  if (it == swarms_.end()) return {};
  const swarm& s = it->second;
  std::vector<fingerprint_row> rows;
  if (n <= kTopKept) {
    n = std::min(n, s.top.size());
    rows.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& key = s.top[i].key;
      rows.push_back({it->first, key, row_of(s, key)});
    }
    return rows;
  }
  // Ranked by their counts; only the n chosen are copied out as rows.
  std::vector<top_slot> order;
  order.reserve(s.fingerprints.size());
  s.fingerprints.for_each([&](const fingerprint_key& key, const auto& f) {
    order.push_back({key, f.counted, f.calls});
  });
  n = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    hotter<top_slot>);
  rows.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    rows.push_back({it->first, order[i].key, row_of(s, order[i].key)});
  }
  return rows;
}

std::vector<protocol::verdict> shared_economics_state::verdicts(std::string_view name) const {
  const auto it = swarms_.find(name);
  if (it == swarms_.end()) return {};
  std::vector<protocol::verdict> out;
  out.reserve(it->second.declared.size());
  for (const auto& key : it->second.declared) {
    const entry* found = it->second.fingerprints.find_full(key);
    if (found == nullptr) continue;  // never: a declared fingerprint is held in full
    const entry& e = *found;
    // A warning held while fewer counted calls than the threshold are in the window is the
    // cap's (judge(): only the cap declares below the threshold): it keeps the cap's message.
    const bool by_cap = e.level == severity::warn && e.window_counted < rules_.threshold;
    out.push_back(verdict_of(it->first, key, e, by_cap));
  }
  if (it->second.budget_level != severity::none) {
    out.push_back(budget_verdict(it->first, it->second));
  }
  if (it->second.cycle_level != severity::none) {
    out.push_back(handoff_verdict(it->first, it->second));
  }
  std::sort(out.begin(), out.end(), [](const protocol::verdict& a, const protocol::verdict& b) {
    if (a.t != b.t) return a.t < b.t;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.fingerprint < b.fingerprint;
  });
  return out;
}

std::vector<protocol::verdict> shared_economics_state::verdicts_as_pushed(
    std::string_view name) const {
  std::vector<protocol::verdict> all = verdicts(name);
  std::vector<protocol::verdict> out;
  out.reserve(all.size());
  // verdicts() sorts by t: a call's two forms, declared together, share a `t` group.
  std::set<std::pair<std::string_view, severity>> exact;  // (tool, level) of the group
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || all[i].t != all[i - 1].t) exact.clear();
    const protocol::verdict& v = all[i];
    if (v.kind == "exact") exact.emplace(v.tool, v.level);
    if (v.kind == "structural" && exact.contains({v.tool, v.level})) continue;
    out.push_back(v);
  }
  return out;
}

std::optional<swarm_view> shared_economics_state::view(std::string_view name, std::size_t n) const {
  auto sum = summary(name);
  if (!sum) return std::nullopt;
  return swarm_view{std::move(*sum), worker_names(name), top_fingerprints(name, n), verdicts(name)};
}

state_counters shared_economics_state::counters() const {
  state_counters c{events_, verdicts_, lifted_, evictions_, 0};
  for (const auto& kv : swarms_) {
    c.fingerprints += kv.second.fingerprints.size();
    ++(kv.second.expired != 0 ? c.tombstones : c.swarms);
  }
  return c;
}

fingerprint_stats shared_economics_state::row_of(const swarm& s, const fingerprint_key& key) {
  fingerprint_stats row;
  const bool found =
      s.fingerprints.visit(key, [&](const fingerprint_key&, const auto& f) { row = f.row(); });
  if (!found) throw std::out_of_range("row_of: no such fingerprint");
  return row;
}

// The row of a fingerprint listed as changed, unless it was erased or listed twice.
void shared_economics_state::take_changed(const std::string& name, swarm& s,
                                          const fingerprint_key& key, state_changes& out) {
  s.fingerprints.visit(key, [&](const fingerprint_key&, auto& f) {
    if (!f.changed) return;
    f.changed = false;
    out.fingerprints.push_back({name, key, f.row()});
  });
}

state_changes shared_economics_state::take_changes() {
  state_changes out;
  out.cleared_swarms = std::move(cleared_);
  cleared_.clear();
  for (auto& [name, s] : swarms_) {
    if (!s.dirty) continue;
    out.swarms.push_back(swarm_row_of(name, s));
    for (auto id = s.workers_persisted; id < s.worker_names.size(); ++id) {
      out.workers.push_back({name, id, s.worker_names[id]});
    }
    s.workers_persisted = static_cast<std::uint32_t>(s.worker_names.size());
    for (const auto& key : s.changed) take_changed(name, s, key, out);
    for (const auto& key : s.erased) out.erased.push_back({name, key});
    s.changed.clear();
    s.erased.clear();
    s.dirty = false;
  }
  return out;
}

state_changes shared_economics_state::take_changes_part(std::size_t limit) {
  state_changes out;
  out.cleared_swarms = std::move(cleared_);
  cleared_.clear();
  for (auto& [name, s] : swarms_) {
    for (auto it = s.erased.begin(); it != s.erased.end() && out.erased.size() < limit;) {
      out.erased.push_back({name, *it});
      it = s.erased.erase(it);
    }
    // From the back of the list, so a part costs what it takes; stale listings are skipped.
    while (!s.changed.empty() && out.erased.size() + out.fingerprints.size() < limit) {
      const fingerprint_key key = s.changed.back();
      s.changed.pop_back();
      take_changed(name, s, key, out);
    }
    if (out.erased.size() + out.fingerprints.size() >= limit) break;
  }
  return out;
}

void shared_economics_state::snapshot_into(const std::string& name, const swarm& s,
                                           state_snapshot& out) {
  out.swarms.push_back(swarm_row_of(name, s));
  for (std::uint32_t id = 0; id < s.worker_names.size(); ++id) {
    out.workers.push_back({name, id, s.worker_names[id]});
  }
  // By key: the table's order depends on its random seed (fingerprint_table.hpp). The keys are
  // sorted, and each row is copied once, in order.
  std::vector<fingerprint_key> keys;
  keys.reserve(s.fingerprints.size());
  s.fingerprints.for_each([&](const fingerprint_key& key, const auto&) { keys.push_back(key); });
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) out.fingerprints.push_back({name, key, row_of(s, key)});
}

swarm_row shared_economics_state::swarm_row_of(const std::string& name, const swarm& s) {
  return {name,
          s.latest_t,
          s.spent,
          s.wasted,
          {s.handoffs.entries().begin(), s.handoffs.entries().end()},
          s.expired};
}

state_snapshot shared_economics_state::snapshot() const {
  state_snapshot out;
  for (const auto& [name, s] : swarms_) snapshot_into(name, s, out);
  return out;
}

std::optional<state_snapshot> shared_economics_state::snapshot(std::string_view name) const {
  const auto it = swarms_.find(name);
  if (it == swarms_.end()) return std::nullopt;
  state_snapshot out;
  snapshot_into(it->first, it->second, out);
  return out;
}

void shared_economics_state::restore(state_snapshot&& snap) {
  restore_begin();
  restore_swarms(snap.swarms, snap.workers);
  restore_batch batch;
  for (auto& r : snap.fingerprints) batch.add(r);
  restore_fingerprints(batch);
  snap = {};
}

void shared_economics_state::restore_begin() {
  swarms_.clear();
  cleared_.clear();
}

void shared_economics_state::restore_swarms(const std::vector<swarm_row>& swarms,
                                            const std::vector<worker_row>& workers) {
  for (const auto& r : swarms) {
    swarm& s = swarms_[r.swarm];
    s.latest_t = r.latest_t;
    s.has_t = true;
    s.expired = r.expired;
    s.spent = r.spent;
    s.wasted = r.wasted;
    // Derived: the level its spend reaches under today's rules, as reached (no verdict now).
    s.budget_level = budget_level_of(r.swarm, s);
    s.budget_t = s.latest_t;
    s.handoffs.assign(r.handoffs);
    s.cycle = s.handoffs.current_cycle(rules_.handoff.max_period);
    s.cycle_level = handoff_level_of(s.cycle);
  }
  for (const auto& r : workers) {
    swarm& s = swarms_[r.swarm];
    if (s.worker_names.size() <= r.id) s.worker_names.resize(r.id + 1);
    s.worker_names[r.id] = r.name;
    s.worker_ids[r.name] = r.id;
    s.workers_persisted = static_cast<std::uint32_t>(s.worker_names.size());
  }
}

// A restored row called once; given twice, the later row wins.
void shared_economics_state::restore_small(swarm& s, const fingerprint_key& key, single&& f) {
  if (single* in = s.fingerprints.emplace_small(key, std::move(f))) {
    account(s, key, *in);
    return;
  }
  restore_full(s, key, f.row());
}

void shared_economics_state::restore_full(swarm& s, const fingerprint_key& key,
                                          fingerprint_stats&& stats) {
  if (entry* f = s.fingerprints.emplace_full(key, std::move(stats))) {
    rebuild_tallies(*f);
    account(s, key, *f);
    return;
  }
  // Given twice: the first row's counts, declaration and top slot are undone first.
  entry& f = *s.fingerprints.full(key).first;
  const bool was_top = forget(s, key, f);
  f.in_top = false;
  f.assign(std::move(stats));
  rebuild_tallies(f);
  account(s, key, f);
  if (was_top) rebuild_top(s);
}

void shared_economics_state::restore_fingerprints(restore_batch& batch) {
  // A batch holds runs of one swarm's rows (the store's key order): the swarm is looked up once
  // per run, and its table grown geometrically ahead of the run (batches would otherwise rehash
  // each time). Each insert's index bucket is a miss of its own (the keys are hashes): the
  // bucket of the row kAhead places on in the same run is fetched meanwhile
  // (docs/performance.md).
  constexpr std::size_t kAhead = 16;
  auto& items = batch.items_;
  std::size_t begin = 0;
  for (const auto& run : batch.runs_) {
    swarm& s = swarms_[run.swarm];
    const std::size_t need = s.fingerprints.size() + (run.end - begin);
    if (need > s.fingerprints.capacity()) {
      s.fingerprints.reserve(std::max(need, 2 * s.fingerprints.size()));
    }
    for (std::size_t j = begin; j < std::min(begin + kAhead, run.end); ++j) {
      s.fingerprints.prefetch(items[j].key);
    }
    for (std::size_t i = begin; i < run.end; ++i) {
      if (i + kAhead < run.end) s.fingerprints.prefetch(items[i + kAhead].key);
      auto& it = items[i];
      if (it.full == restore_batch::kNotFull) {
        restore_small(s, it.key, batch.entry(it));
      } else {
        restore_full(s, it.key, std::move(batch.fulls_[it.full]));
      }
    }
    begin = run.end;
  }
}

void state_changes::merge_newer(state_changes&& newer) {
  for (const auto& name : newer.cleared_swarms) {
    const auto of = [&](const auto& row) { return row.swarm == name; };
    std::erase_if(swarms, of);
    std::erase_if(workers, of);
    std::erase_if(fingerprints, of);
    std::erase_if(erased, of);
    cleared_swarms.push_back(name);
  }
  // Later rows replace earlier rows of the same identity; one hash pass keeps this linear.
  std::unordered_set<std::string> newer_swarms;
  for (const auto& r : newer.swarms) newer_swarms.insert(r.swarm);
  std::erase_if(swarms, [&](const swarm_row& x) { return newer_swarms.contains(x.swarm); });
  std::unordered_set<std::string> touched;  // swarm + '\0' + kind + value
  const auto id = [](const std::string& s, const fingerprint_key& k) {
    return s + '\0' + static_cast<char>(k.kind) + std::to_string(k.value);
  };
  for (const auto& r : newer.fingerprints) touched.insert(id(r.swarm, r.key));
  for (const auto& r : newer.erased) touched.insert(id(r.swarm, r.key));
  std::erase_if(fingerprints, [&](const auto& x) { return touched.contains(id(x.swarm, x.key)); });
  std::erase_if(erased, [&](const auto& x) { return touched.contains(id(x.swarm, x.key)); });
  for (auto& r : newer.swarms) swarms.push_back(std::move(r));
  for (auto& r : newer.workers) workers.push_back(std::move(r));
  for (auto& r : newer.fingerprints) fingerprints.push_back(std::move(r));
  for (auto& r : newer.erased) erased.push_back(std::move(r));
}

}  // namespace loopguard::daemon
