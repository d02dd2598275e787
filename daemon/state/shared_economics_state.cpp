#include "state/shared_economics_state.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <tuple>
#include <utility>

#include "state/nudge_text.hpp"

namespace loopguard::daemon {
namespace {

// Whether `worker`'s last call of the fingerprint in its window counted.
bool last_call_counted(const fingerprint_entry& f, std::uint32_t worker) {
  const auto last = std::find_if(f.window.rbegin(), f.window.rend(),
                                 [&](const window_call& c) { return c.worker == worker; });
  return last != f.window.rend() && last->counted;
}
bool last_call_counted(const single_call_entry& f, std::uint32_t worker) {
  return f.in_window && f.worker == worker && f.counted != 0;
}

// Remembers a call's result (up to `max` distinct ones); false when the call brought a new one:
// progress, not counted (when progress_aware).
bool note_result(fingerprint_entry& f, std::optional<std::uint64_t> result, bool progress_aware,
                 std::size_t max) {
  if (!result) return true;
  const bool seen = std::find(f.results.begin(), f.results.end(), *result) != f.results.end();
  if (!seen && f.results.size() < max) f.results.push_back(*result);
  return !progress_aware || f.calls == 0 || seen;
}

// The order of a min-heap on `t`: the front is the earliest.
struct later_t {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a.t > b.t;
  }
};

}  // namespace

void assign(swarm_event& e, const protocol::event& ev) {
  e.tool = ev.tool;
  e.summary = ev.summary;
  e.exact = ev.exact;
  e.structural = ev.structural;
  e.result = ev.result;
  e.ok = ev.ok;
  e.t = ev.t;
  e.spent = ev.spent;
  e.charge = ev.charge;
  e.peer = ev.peer;
}

shared_economics_state::shared_economics_state(swarm_rules rules, state_options options)
    : rules_(std::move(rules)), options_(options) {
  assert(validate(rules_).ok());  // callers validate configs before building a state
}

double shared_economics_state::clock_time(const swarm& s, double t) const {
  if (!std::isfinite(t)) t = s.has_t ? s.latest_t : 0;  // decoders refuse these; be total
  if (!s.has_t) return t;
  return std::min(t, s.latest_t + rules_.window_seconds);
}

inline const swarm_event& shared_economics_state::advance_clock(swarm& s, const swarm_event& raw,
                                                                swarm_event& clocked) const {
  // The event's time under the swarm clock rule (docs/protocol.md, "Time"): one event moves
  // the clock forward by one window at most.
  const double t = clock_time(s, raw.t);
  const bool moved = raw.t != t;
  if (moved) {
    clocked = raw;
    clocked.t = t;
  }
  s.latest_t = s.has_t ? std::max(s.latest_t, t) : t;
  s.has_t = true;
  s.dirty = true;
  return moved ? clocked : raw;
}

inline std::uint32_t shared_economics_state::worker_id(swarm& s, const std::string& worker) {
  auto [it, inserted] =
      s.worker_ids.try_emplace(worker, static_cast<std::uint32_t>(s.worker_names.size()));
  if (inserted) s.worker_names.push_back(worker);
  return it->second;
}

namespace {

// Asks the CPU to fetch n values from `p`, their first `most` bytes, into its cache (a hint:
// never faults, whatever `p` is). GCC counts a prefetch as no effect at all, so a function that
// only prefetches is found pure and its calls dropped; the empty asm is an effect it keeps.
template <class T>
void fetch_lines(const T* p, std::size_t n, std::size_t most) {
  if (p == nullptr) return;
  const auto* bytes = reinterpret_cast<const char*>(p);
  const std::size_t len = std::min(n * sizeof(T), most);
  for (std::size_t off = 0; off < len; off += 64) __builtin_prefetch(bytes + off);
  asm volatile("" : : "r"(bytes));
}

}  // namespace

shared_economics_state::read_ahead::read_ahead(const shared_economics_state& state,
                                               std::string_view swarm_name,
                                               std::span<const protocol::event> batch)
    : batch_(batch) {
  const auto it = state.swarms_.find(swarm_name);
  if (it == state.swarms_.end()) return;
  swarm_ = &it->second;
  for (std::size_t i = 0; i < std::min(kIndexAhead, batch.size()); ++i) fetch_buckets(i);
  for (std::size_t i = 0; i < std::min(kAhead, batch.size()); ++i) fetch_entries(i);
}

void shared_economics_state::read_ahead::fetch_buckets(std::size_t i) const {
  const protocol::event& ev = batch_[i];
  swarm_->fingerprints.prefetch({fingerprint_kind::exact, ev.exact});
  swarm_->fingerprints.prefetch({fingerprint_kind::structural, ev.structural});
}

void shared_economics_state::read_ahead::fetch_entries(std::size_t i) const {
  const protocol::event& ev = batch_[i];
  for (const fingerprint_key k : {fingerprint_key{fingerprint_kind::exact, ev.exact},
                                  fingerprint_key{fingerprint_kind::structural, ev.structural}}) {
    const auto [p, n] = swarm_->fingerprints.address(k);
    fetch_lines(static_cast<const char*>(p), n, n);
  }
}

void shared_economics_state::read_ahead::before(std::size_t i) const {
  if (swarm_ == nullptr) return;
  if (const std::size_t j = i + kIndexAhead; j < batch_.size()) fetch_buckets(j);
  if (const std::size_t j = i + kAhead; j < batch_.size()) fetch_entries(j);
  if (const std::size_t j = i + kAhead / 2; j < batch_.size()) fetch_blocks(j);
}

// Looked up again (the lookup is in the cache now).
void shared_economics_state::read_ahead::fetch_blocks(std::size_t i) const {
  const protocol::event& ev = batch_[i];
  for (const fingerprint_key k : {fingerprint_key{fingerprint_kind::exact, ev.exact},
                                  fingerprint_key{fingerprint_kind::structural, ev.structural}}) {
    const entry* found = swarm_->fingerprints.find_full(k);
    if (found == nullptr) continue;  // absent, or called once (no blocks)
    const entry& f = *found;
    // Each block beyond its inline part, its first lines (where a call's work begins).
    if (f.window.size() > 1) {
      fetch_lines(&f.window.front(), 1, 64);
      fetch_lines(&*f.window.rbegin(), 1, 64);
    }
    if (f.tallies.size() > 1) fetch_lines(f.tallies.data(), f.tallies.size(), 2 * 64);
    if (f.results.size() > 1) fetch_lines(f.results.data(), f.results.size(), 4 * 64);
    if (f.workers.size() > 2) fetch_lines(f.workers.data(), f.workers.size(), 64);
  }
}

std::vector<protocol::verdict> shared_economics_state::apply(const swarm_event& raw) {
  ++events_;
  if (raw.charge) {
    // Charged to a call, so a swarm without one has nothing to charge (and is not created).
    const auto known = swarms_.find(raw.swarm);
    if (known == swarms_.end()) return {};
    charge(known->second, raw);
    std::vector<protocol::verdict> out;
    if (auto b = judge_budget(known->first, known->second)) out.push_back(std::move(*b));
    verdicts_ += out.size();
    return out;
  }
  auto [it, inserted] = swarms_.try_emplace(raw.swarm);
  swarm& s = it->second;
  s.expired = 0;  // a tombstone's next call makes it live again
  s.spent += raw.spent;
  swarm_event clocked;
  const swarm_event& e = advance_clock(s, raw, clocked);
  const std::uint32_t worker = worker_id(s, e.worker);
  const fingerprint_key exact{fingerprint_kind::exact, e.exact};
  const fingerprint_key structural{fingerprint_kind::structural, e.structural};
  std::vector<protocol::verdict> out;  // the lifted ones first
  auto v1 = touch(it->first, s, exact, e, worker, out);
  auto v2 = touch(it->first, s, structural, e, worker, out);
  if (!s.expiries.empty() && s.latest_t - s.expiries.front().t >= rules_.window_seconds) {
    sweep(it->first, s, out);
  }
  evict_if_needed(it->first, s, exact, structural, out);
  if (!out.empty()) {
    // Whatever order the heap popped them in: the same on every run and after a restore.
    std::sort(out.begin(), out.end(), [](const protocol::verdict& a, const protocol::verdict& b) {
      return std::tie(a.kind, a.fingerprint) < std::tie(b.kind, b.fingerprint);
    });
    lifted_ += out.size();
  }
  // The structural form groups at least the calls the exact one does; at the same level the
  // exact verdict says it more precisely, so one nudge is enough.
  const bool both = v2 && !(v1 && v1->level == v2->level);
  if (v1) {
    out.push_back(std::move(*v1));
    ++verdicts_;
  }
  if (both) {
    out.push_back(std::move(*v2));
    ++verdicts_;
  }
  if (!e.peer.empty()) judge_handoffs(it->first, s, e, out);
  if (auto b = judge_budget(it->first, s)) {
    out.push_back(std::move(*b));
    ++verdicts_;
  }
  return out;
}

severity shared_economics_state::handoff_level_of(const std::optional<handoff_cycle>& c) const {
  if (!c) return severity::none;
  const handoff_rules& r = rules_.handoff;
  if (r.critical_at != 0 && c->rounds >= r.critical_at) return severity::critical;
  return c->rounds >= r.warn_at ? severity::warn : severity::none;
}

void shared_economics_state::judge_handoffs(const std::string& name, swarm& s, const swarm_event& e,
                                            std::vector<protocol::verdict>& out) {
  s.handoffs.add(
      {e.t, e.worker, e.peer, handoff_fingerprint(e.structural, e.peer), e.tool, e.spent});
  auto cycle = s.handoffs.current_cycle(rules_.handoff.max_period);
  const severity level = handoff_level_of(cycle);
  const bool other = !cycle || !s.cycle || cycle->key != s.cycle->key;
  if (s.cycle_level != severity::none && (other || level < s.cycle_level)) {
    // The cycle was broken (or fell below its level): lift it, for its own workers.
    s.cycle_level = severity::none;
    if (options_.lift_verdicts) {
      s.cycle->t = s.latest_t;
      out.push_back(handoff_verdict(name, s));
      ++lifted_;
    }
  }
  // The cycle as it stands now (its counts grow while it goes on): what a restore derives.
  s.cycle = std::move(cycle);
  if (level > s.cycle_level) {
    s.cycle_level = level;
    out.push_back(handoff_verdict(name, s));
    ++verdicts_;
  }
}

protocol::verdict shared_economics_state::handoff_verdict(const std::string& name,
                                                          const swarm& s) const {
  const handoff_cycle& c = *s.cycle;
  protocol::verdict v;
  v.swarm = name;
  v.tool = c.tool;
  v.kind = "handoff";
  v.fingerprint = c.key;
  v.level = s.cycle_level;
  v.calls = c.calls;
  v.spent = c.spent;
  v.unit = rules_.budget.of(name).unit;
  v.t = c.t;
  for (const auto& w : c.workers) {
    if (std::find(v.to.begin(), v.to.end(), w) == v.to.end()) v.to.push_back(w);
  }
  v.workers = static_cast<std::uint32_t>(v.to.size());
  v.message = handoff_nudge(s.cycle_level, c, v.unit);
  return v;
}

double shared_economics_state::budget_used(const std::string& name, const swarm& s) const {
  const budget_cap& cap = rules_.budget.of(name);
  double used = 0;  // of the cap, the further of tokens and amount
  if (cap.tokens > 0) used = static_cast<double>(s.spent.tokens) / static_cast<double>(cap.tokens);
  if (cap.amount > 0) used = std::max(used, s.spent.amount / cap.amount);
  return used;
}

severity shared_economics_state::budget_level_of(const std::string& name, const swarm& s) const {
  const budget_cap& cap = rules_.budget.of(name);
  if (!cap.capped()) return severity::none;
  const double used = budget_used(name, s);
  if (cap.terminate_at > 0 && used >= cap.terminate_at) return severity::terminate;
  if (used >= 1) return severity::critical;
  if (used >= cap.warn_fraction) return severity::warn;
  return severity::none;
}

std::optional<protocol::verdict> shared_economics_state::judge_budget(const std::string& name,
                                                                      swarm& s) {
  const severity level = budget_level_of(name, s);
  if (level <= s.budget_level) return std::nullopt;
  s.budget_level = level;
  s.budget_t = s.latest_t;
  return budget_verdict(name, s);
}

protocol::verdict shared_economics_state::budget_verdict(const std::string& name,
                                                         const swarm& s) const {
  const budget_cap& cap = rules_.budget.of(name);
  protocol::verdict v;
  v.swarm = name;
  v.kind = "budget";
  v.level = s.budget_level;
  v.workers = static_cast<std::uint32_t>(s.worker_names.size());
  v.spent = s.spent;
  v.unit = cap.unit;
  v.t = s.budget_t;
  v.message = budget_nudge(s.budget_level, s.spent, cap);
  return v;
}

std::optional<protocol::verdict> shared_economics_state::touch(
    const std::string& name, swarm& s, const fingerprint_key& key, const swarm_event& e,
    std::uint32_t worker, std::vector<protocol::verdict>& lifted) {
  auto [found, inserted] = s.fingerprints.full(key);
  entry& f = *found;
  if (inserted) {
    f.label = fingerprint_label(e.tool, e.summary);
    f.first_seen = f.last_seen = e.t;
  }
  expire(f, s.latest_t);
  const bool counted = note_result(f, e.result, rules_.progress_aware, kMaxResultsPerFingerprint);
  ++f.calls;
  if (counted) ++f.counted;
  if (counted && !e.spent.empty()) waste(s, key, f, e.spent);
  f.first_seen = std::min(f.first_seen, e.t);
  f.last_seen = std::max(f.last_seen, e.t);
  if (auto w = std::lower_bound(f.workers.begin(), f.workers.end(), worker);
      w == f.workers.end() || *w != worker) {
    f.workers.insert(w, worker);
  }
  push_call(f, {e.t, worker, counted});
  while (f.window.size() > rules_.max_window_calls) pop_call(f);
  mark_changed(s, key, f);
  // Only an entry created just now can have been erased since the last take_changes().
  if (inserted && !s.erased.empty()) s.erased.erase(key);
  if (key.kind == fingerprint_kind::exact) ++s.exact_calls;
  // Most calls are far from the top: one comparison, no call.
  if (f.in_top || s.top.size() < kTopKept || f.counted >= s.top.back().counted) rank(s, key, f);
  // Its own expiries and the window's bound can take a declared fingerprint below its level.
  if (f.level != severity::none && options_.lift_verdicts && !still_meets(f)) {
    lifted.push_back(lift(name, s, key, f));
  }
  const judgement j = judge(f);
  if (j.level > f.level) return declare(name, s, key, f, j, e.t);
  if (single::fits(f)) s.fingerprints.shrink(key);  // f is gone
  return std::nullopt;
}

void shared_economics_state::waste(swarm& s, const fingerprint_key& key, entry& f,
                                   const protocol::cost& c) {
  f.wasted += c;
  if (f.level != severity::none) book(s, key, f);
}

void shared_economics_state::book(swarm& s, const fingerprint_key& key, entry& f) {
  if (key.kind != fingerprint_kind::exact || f.booked() == f.wasted) return;
  protocol::cost& booked = f.report().booked;
  s.wasted.tokens += f.wasted.tokens - booked.tokens;
  s.wasted.amount += f.wasted.amount - booked.amount;
  booked = f.wasted;
}

void shared_economics_state::charge(swarm& s, const swarm_event& e) {
  if (e.spent.empty()) return;
  s.spent += e.spent;
  s.dirty = true;
  const auto w = s.worker_ids.find(e.worker);
  if (w == s.worker_ids.end()) return;
  for (const fingerprint_key key : {fingerprint_key{fingerprint_kind::exact, e.exact},
                                    fingerprint_key{fingerprint_kind::structural, e.structural}}) {
    bool last_counted = false;  // the worker's last call in the window counted
    s.fingerprints.visit(key, [&](const fingerprint_key&, const auto& f) {
      last_counted = last_call_counted(f, w->second);
    });
    if (!last_counted) continue;
    entry& f = *s.fingerprints.full(key).first;
    waste(s, key, f, e.spent);
    mark_changed(s, key, f);
  }
}

protocol::verdict shared_economics_state::declare(const std::string& name, swarm& s,
                                                  const fingerprint_key& key, entry& f,
                                                  const judgement& j, double t) {
  if (f.level == severity::none) {
    s.declared.insert(key);
    book(s, key, f);
  }
  f.level = j.level;
  declared_report& r = f.report();
  r.level_t = t;
  r.level_calls = j.calls;
  r.level_workers = j.workers;
  // A higher level can fall earlier: queue it anew (an entry queued before is now stale).
  if (options_.lift_verdicts) schedule(s, key, f);
  return verdict_of(name, key, f, j.by_cap);
}

void shared_economics_state::expire(entry& f, double now) const {
  // Arrival order is time order up to small skews between workers; a late-arriving old call
  // leaves when it reaches the front.
  while (!f.window.empty() && now - f.window.front().t >= rules_.window_seconds) {
    pop_call(f);
  }
}

void shared_economics_state::push_call(entry& f, const window_call& c) const {
  f.window.push_back(c);
  tally(f, c);
}

void shared_economics_state::tally(entry& f, const window_call& c) {
  worker_tally* t = nullptr;
  for (auto& x : f.tallies) {
    if (x.worker == c.worker) {
      t = &x;
      break;
    }
  }
  if (!t) t = &f.tallies.emplace_back(worker_tally{c.worker, 0, 0});
  ++t->all;
  if (c.counted) {
    ++t->counted;
    ++f.window_counted;
  }
}

void shared_economics_state::pop_call(entry& f) const {
  assert(!f.window.empty());
  const window_call c = f.window.front();
  f.window.pop_front();
  auto t = std::find_if(f.tallies.begin(), f.tallies.end(),
                        [&](const worker_tally& x) { return x.worker == c.worker; });
  assert(t != f.tallies.end());  // every windowed call has its tally
  --t->all;
  if (c.counted) {
    --t->counted;
    --f.window_counted;
  }
  if (t->all == 0) f.tallies.erase(t);
}

void shared_economics_state::rebuild_tallies(entry& f) {
  f.tallies.clear();
  f.window_counted = 0;
  for (const auto& c : f.window) tally(f, c);
}

std::uint32_t shared_economics_state::counted_workers(const entry& f) {
  std::uint32_t n = 0;
  for (const auto& t : f.tallies) n += t.counted > 0 ? 1u : 0u;
  return n;
}

shared_economics_state::judgement shared_economics_state::judge(const entry& f) const {
  judgement j;
  const std::uint32_t counted_workers = shared_economics_state::counted_workers(f);
  const auto all_workers = static_cast<std::uint32_t>(f.tallies.size());
  const auto all_calls = static_cast<std::uint32_t>(f.window.size());
  if (counted_workers >= rules_.min_workers && f.window_counted >= rules_.threshold) {
    j.level = severity::warn;
    if (rules_.critical_at != 0 && f.window_counted >= rules_.critical_at) {
      j.level = severity::critical;
    }
    j.calls = f.window_counted;
    j.workers = counted_workers;
  }
  if (j.level == severity::none && all_workers >= rules_.min_workers &&
      all_calls >= rules_.absolute_cap) {
    j.level = severity::warn;
    j.calls = all_calls;
    j.workers = all_workers;
    j.by_cap = true;
  }
  return j;
}

protocol::verdict shared_economics_state::verdict_of(const std::string& name,
                                                     const fingerprint_key& key, const entry& f,
                                                     bool by_cap) const {
  protocol::verdict v;
  v.swarm = name;
  v.tool = f.label.tool();
  v.kind = to_string(key.kind);
  v.fingerprint = key.value;
  v.level = f.level;
  v.calls = f.level_calls();
  v.workers = f.level_workers();
  v.t = f.level_t();
  v.spent = f.wasted;
  v.unit = rules_.budget.of(name).unit;
  v.message = global_nudge(f.level, {v.tool, v.kind, v.calls, v.workers, rules_.window_seconds,
                                     by_cap, v.spent, v.unit});
  return v;
}

void shared_economics_state::evict_if_needed(const std::string& name, swarm& s,
                                             const fingerprint_key& keep_a,
                                             const fingerprint_key& keep_b,
                                             std::vector<protocol::verdict>& lifted) {
  const std::size_t cap = rules_.max_fingerprints_per_swarm;
  if (s.fingerprints.size() <= cap) return;
  // Evict in batches (1/64 of the cap) so the selection's O(n) is paid rarely.
  const std::size_t target = cap - cap / 64;
  std::vector<std::pair<double, fingerprint_key>> coldest;
  coldest.reserve(s.fingerprints.size());
  s.fingerprints.for_each([&](const fingerprint_key& key, const auto& f) {
    if (key != keep_a && key != keep_b) coldest.emplace_back(f.last_seen, key);
  });
  const std::size_t n = std::min(coldest.size(), s.fingerprints.size() - target);
  std::nth_element(coldest.begin(), coldest.begin() + static_cast<std::ptrdiff_t>(n),
                   coldest.end());
  // The victims are the n least (last_seen, key): the same set whatever order the table walks
  // in, and erased in that sorted order, since the walk's order (a per-table seed's) must not
  // reach what is recorded (the erased set, the lifted verdicts' changes): a replay could differ.
  std::sort(coldest.begin(), coldest.begin() + static_cast<std::ptrdiff_t>(n));
  bool lost_top = false;
  for (std::size_t i = 0; i < n; ++i) {
    const fingerprint_key& key = coldest[i].second;
    s.fingerprints.take(key, [&](const fingerprint_key& k, auto& f) {
      // An active verdict no longer counted would never be lifted: lift it now. (Only the full
      // form is ever declared.)
      if constexpr (std::is_same_v<std::decay_t<decltype(f)>, entry>) {
        if (f.level != severity::none && options_.lift_verdicts) {
          lifted.push_back(lift(name, s, k, f));
        }
      }
      lost_top |= forget(s, k, f);
    });
    s.erased.insert(key);
  }
  if (lost_top) rebuild_top(s);
  evictions_ += n;
}

bool shared_economics_state::still_meets(const entry& f) const {
  switch (f.level) {
    case severity::none:
      return true;
    case severity::warn:
      return f.window_counted >= rules_.threshold || f.window.size() >= rules_.absolute_cap;
    default:  // critical (a swarm rule never declares terminate)
      return f.window_counted >= (rules_.critical_at != 0 ? rules_.critical_at : rules_.threshold);
  }
}

protocol::verdict shared_economics_state::lift(const std::string& name, swarm& s,
                                               const fingerprint_key& key, entry& f) {
  s.declared.erase(key);
  mark_changed(s, key, f);
  f.level = severity::none;
  declared_report& r = f.report();
  r.level_t = s.latest_t;
  r.level_calls = f.window_counted;
  r.level_workers = counted_workers(f);
  return verdict_of(name, key, f, false);
}

// Calls leave the window in arrival order, each once the clock is a window past it and past
// every call before it (expire()). The level holds until enough counted calls have left (and,
// for warn, enough calls of any kind for the cap): the time is the latest among the calls up
// to the one whose leaving takes it below. Calls added later only make it later.
double shared_economics_state::lift_time(const entry& f) const {
  const auto& w = f.window;
  const std::uint32_t need =
      f.level == severity::warn || rules_.critical_at == 0 ? rules_.threshold : rules_.critical_at;
  std::size_t counted_to_go = f.window_counted >= need ? f.window_counted - need + 1 : 0;
  std::size_t all_to_go = f.level == severity::warn && w.size() >= rules_.absolute_cap
                              ? w.size() - rules_.absolute_cap + 1
                              : 0;
  double latest = -HUGE_VAL;  // below already: at once
  for (std::size_t i = 0; i < w.size() && (counted_to_go > 0 || all_to_go > 0); ++i) {
    latest = std::max(latest, w[i].t);
    if (w[i].counted && counted_to_go > 0) --counted_to_go;
    if (all_to_go > 0) --all_to_go;
  }
  return latest;
}

void shared_economics_state::schedule(swarm& s, const fingerprint_key& key, entry& f) const {
  const double t = lift_time(f);
  f.report().queued_t = t;
  s.expiries.push_back({t, key});
  std::push_heap(s.expiries.begin(), s.expiries.end(), later_t{});
}

// Each entry is judged once the clock is a window past its time, by expire()'s own test (so
// the sweep and expire() agree to the last bit of rounding).
void shared_economics_state::sweep(const std::string& name, swarm& s,
                                   std::vector<protocol::verdict>& lifted) {
  while (!s.expiries.empty() && s.latest_t - s.expiries.front().t >= rules_.window_seconds) {
    std::pop_heap(s.expiries.begin(), s.expiries.end(), later_t{});
    const expiry x = s.expiries.back();
    s.expiries.pop_back();
    // Stale, or erased (a fingerprint called once is never queued: it is never declared).
    entry* found = s.fingerprints.find_full(x.key);
    if (found == nullptr || !(found->queued_t() == x.t)) continue;
    entry& f = *found;
    f.report().queued_t = std::numeric_limits<double>::quiet_NaN();
    if (f.level == severity::none) continue;  // lifted meanwhile
    const std::size_t before = f.window.size();
    expire(f, s.latest_t);
    if (f.window.size() != before) mark_changed(s, x.key, f);
    if (still_meets(f)) {
      schedule(s, x.key, f);
    } else {
      lifted.push_back(lift(name, s, x.key, f));
    }
  }
}

bool shared_economics_state::complete(std::string_view name) {
  const auto it = swarms_.find(name);
  if (it == swarms_.end()) return false;
  cleared_.emplace_back(name);
  swarms_.erase(it);
  return true;
}

bool shared_economics_state::expire(std::string_view name, double wall) {
  const auto it = swarms_.find(name);
  if (it == swarms_.end() || it->second.expired != 0) return false;
  swarm& old = it->second;
  swarm tomb;
  tomb.latest_t = old.latest_t;
  tomb.has_t = old.has_t;
  tomb.spent = old.spent;
  tomb.wasted = old.wasted;
  tomb.budget_level = old.budget_level;  // reached: not declared again
  tomb.budget_t = old.budget_t;
  tomb.expired = wall > 0 ? wall : std::numeric_limits<double>::min();
  tomb.dirty = true;  // the store clears the swarm's rows, then writes the tombstone's
  old = std::move(tomb);
  cleared_.emplace_back(name);
  return true;
}

}  // namespace loopguard::daemon
