// shared_economics_state: what every worker of every swarm has called, and the swarm-wide doom
// loops that no single worker repeats often enough to notice (docs/protocol.md, "Global doom
// loop").
//
// Pure: no sockets, files or clocks. Time is the events' own `t` (seconds); each swarm's clock
// is the highest time it has seen, so replay and the daemon judge a recording identically. One
// event moves a swarm's clock forward by at most one window (window_seconds): its time is
// clamped to clock + window, so no single worker can push every other worker's calls out of
// the window for good (docs/protocol.md, "Time").
//
// Thread-safety: none. The daemon serializes every call behind one mutex; replay owns its own.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "loopguard/protocol.hpp"
#include "loopguard/severity.hpp"
#include "state/fingerprint_entry.hpp"
#include "state/fingerprint_table.hpp"
#include "state/handoff_cycles.hpp"
#include "state/restore_batch.hpp"
#include "state/state_rows.hpp"
#include "state/swarm_rules.hpp"

namespace loopguard::daemon {

// One judged call: the call and its result, when it is known.
struct swarm_event {
  std::string swarm, worker, tool, summary;  // summary: short human-readable argument summary
  std::uint64_t exact = 0, structural = 0;
  std::optional<std::uint64_t> result;  // result fingerprint; nullopt = no result
  bool ok = true;
  double t = 0;          // event time in seconds (trace clock)
  protocol::cost spent;  // what the call cost, as reported
  // No call: `spent` is charged to this worker's last call of the fingerprints (protocol
  // event.charge); tool, summary, result and ok are not read.
  bool charge = false;
  std::string peer;  // the worker the call hands work to; empty: none (protocol event.peer)
};

// Copies a wire event's fields into `e`, leaving e.swarm and e.worker (and reusing its strings'
// capacity: ingest fills one swarm_event per batch).
void assign(swarm_event& e, const protocol::event& ev);

struct swarm_summary {
  std::string swarm;
  std::size_t fingerprints = 0;
  std::size_t workers = 0;
  std::size_t verdicts = 0;          // fingerprints with a declared level, and the budget's
  std::uint64_t calls = 0;           // exact-fingerprint calls, i.e. events applied
  protocol::cost spent;              // every cost the swarm's events reported
  protocol::cost wasted;             // what its global dead ends burned (counted calls of declared
                                     // exact fingerprints, from before and while declared)
  std::string unit;                  // of the amounts (the swarm's budget unit)
  severity budget = severity::none;  // the level its budget reached
  double budget_used = 0;            // of its cap (the further of tokens and amount); 0: no cap
  double expired = 0;                // a tombstone since (daemon wall clock, Unix seconds); 0: live
};

// What GET /api/swarms/{id} shows, copied out of the state in one piece (no digest: computing
// one walks every fingerprint).
struct swarm_view {
  swarm_summary summary;
  std::vector<std::string> worker_names;    // sorted
  std::vector<fingerprint_row> top;         // hottest first (top_fingerprints)
  std::vector<protocol::verdict> verdicts;  // oldest first (verdicts)
};

// How the state behaves beyond the swarm rule.
struct state_options {
  // Lift a declared verdict whose counted calls in the window fell below its level (the
  // daemon's feature active_verdicts). Off: a declared level stays until swarm_complete, as in
  // protocol v1.
  bool lift_verdicts = true;
};

struct state_counters {
  std::uint64_t events = 0;      // apply() calls
  std::uint64_t verdicts = 0;    // verdicts declared (returned with a level above none)
  std::uint64_t lifted = 0;      // verdicts lifted (returned with level none)
  std::uint64_t evictions = 0;   // fingerprints evicted for the per-swarm cap
  std::size_t fingerprints = 0;  // held now, all swarms
  std::size_t swarms = 0;        // live swarms held now
  std::size_t tombstones = 0;    // expired swarms held now (swarm_row::expired)
};

class shared_economics_state {
  struct swarm;

 public:
  // Result fingerprints remembered per fingerprint for the progress rule; a result beyond
  // them is still judged against those remembered, so it may count as progress again.
  static constexpr std::size_t kMaxResultsPerFingerprint = 64;

  // `rules` must pass validate(); the defaults are the defaults.
  explicit shared_economics_state(swarm_rules rules = {}, state_options options = {});

  // Applies one judged call (or charge: only its cost is applied, see swarm_event) and returns
  // the verdicts it caused, as the daemon pushes them
  // (protocol::verdict: the message is the nudge text naming the tool, calls, workers and
  // what to do instead). A declared verdict is active while its fingerprint's counted calls in
  // the window still meet its level (warn: threshold, or absolute_cap calls of any kind;
  // critical: critical_at); once they fall below it (the swarm clock moved on, or the
  // fingerprint is evicted) the verdict is returned again with level none (calls and workers:
  // the counted ones left), and the fingerprint may be declared again (with
  // options.lift_verdicts). Order: lifted verdicts first, by kind and fingerprint; then what
  // the call declared, each level of each fingerprint once per declaration (when both
  // fingerprints of the call reach the same level at once, only the exact one is returned).
  std::vector<protocol::verdict> apply(const swarm_event& e);
  // Hints while a batch of one swarm's events is applied (docs/performance.md, "CPU per
  // event"). A batch's events touch entries scattered over the whole state, each a trip to
  // memory, and each a chain of them: the index bucket, then the entry, then its heap blocks.
  // So before(i), called before event i is applied, fetches the index buckets of event
  // i + kIndexAhead's keys into the CPU's cache, looks up the entries of event i + kAhead (their
  // buckets fetched before) and fetches them, and fetches the heap blocks of event
  // i + kAhead / 2's entries (a window of more than one call, results, workers, tallies), whose
  // addresses are in the entries fetched before. The constructor starts the first events'.
  // Changes nothing; a swarm unknown when the read-ahead is made gets none.
  class read_ahead {
   public:
    static constexpr std::size_t kIndexAhead = 16;
    static constexpr std::size_t kAhead = 8;
    read_ahead(const shared_economics_state& state, std::string_view swarm,
               std::span<const protocol::event> batch);
    void before(std::size_t i) const;

   private:
    void fetch_buckets(std::size_t i) const;
    void fetch_entries(std::size_t i) const;
    void fetch_blocks(std::size_t i) const;
    const swarm* swarm_ = nullptr;
    std::span<const protocol::event> batch_;
  };

  // Forgets everything about `swarm` (swarm_complete). False when it was unknown.
  bool complete(std::string_view swarm);

  // Retention (docs/operations.md): turns an idle live swarm into a tombstone that keeps its
  // clock, spend and wasted cost (so its budget goes on where it stopped) and forgets the rest:
  // fingerprints, windows, verdicts, workers, hand-offs. `wall` (the daemon's wall clock) is
  // only recorded, never compared. The swarm's next call makes it live again. False when it is
  // unknown or already a tombstone.
  bool expire(std::string_view swarm, double wall);

  // xxHash (XXH3-64) over the canonical form of one swarm: per fingerprint its kind, value,
  // tool, calls, counted calls, worker names, first and last seen, and declared level. 0 for
  // an unknown swarm. digest() covers every swarm.
  std::uint64_t digest(std::string_view swarm) const;
  std::uint64_t digest() const;

  // Read-only views for the API. Their cost does not grow with the fingerprints held: counts,
  // the kTopKept hottest fingerprints and the declared verdicts are kept as events arrive.
  // swarms() and summary() are O(1) per swarm; verdicts() is O(verdicts).
  static constexpr std::size_t kTopKept = 20;
  std::vector<swarm_summary> swarms() const;
  std::optional<swarm_summary> summary(std::string_view swarm) const;
  std::vector<std::string> worker_names(std::string_view swarm) const;
  // The `n` fingerprints with the most counted calls (ties: more calls, then key). Up to
  // kTopKept from the kept ranking; a larger `n` walks every fingerprint.
  std::vector<fingerprint_row> top_fingerprints(std::string_view swarm, std::size_t n) const;
  // Every active verdict of the swarm (declared, not lifted), at its level, oldest first.
  std::vector<protocol::verdict> verdicts(std::string_view swarm) const;
  // The active verdicts as apply() pushed them, for a worker told after its welcome: when
  // both forms of one call were declared together at one level, only the exact verdict was
  // pushed, so the structural one is left out here too (the API lists both).
  std::vector<protocol::verdict> verdicts_as_pushed(std::string_view swarm) const;
  // summary, worker names, the top `n` and the verdicts at once; nullopt for an unknown swarm.
  std::optional<swarm_view> view(std::string_view swarm, std::size_t n) const;
  state_counters counters() const;
  const swarm_rules& rules() const { return rules_; }

  // Checkpoint support: the rows changed since the last call (then forgotten), a full
  // snapshot, and a restore from one (replacing everything; clears the change set). A
  // restored state lifts verdicts exactly as the state it was taken from would have.
  state_changes take_changes();
  // Part of take_changes(), for a take in bounded holds of a lock (docs/storage.md, "The change
  // set is taken in parts"): the swarms completed since the last call and up to `limit`
  // changed or erased fingerprints, which are then no longer changed (a later change marks
  // them again). Swarm and worker rows stay for take_changes().
  state_changes take_changes_part(std::size_t limit);
  state_snapshot snapshot() const;
  // The rows of one swarm (its swarm row, workers and fingerprints); nullopt for an unknown one.
  std::optional<state_snapshot> snapshot(std::string_view swarm) const;
  void restore(const state_snapshot& s) { restore(state_snapshot(s)); }
  void restore(state_snapshot&& s);  // moves the rows' vectors and strings
  // The same restore in parts, for rows that arrive in batches: restore_begin() forgets
  // everything; then restore_swarms() and restore_fingerprints() in any order, each row of
  // the snapshot exactly once (a row given twice: the later one wins). restore_fingerprints()
  // moves the batch's entries out, leaving it for the caller to clear and reuse.
  void restore_begin();
  void restore_swarms(const std::vector<swarm_row>& swarms, const std::vector<worker_row>& workers);
  void restore_fingerprints(restore_batch& batch);

 private:
  using worker_tally = fingerprint_entry::worker_tally;
  using entry = fingerprint_entry;
  using single = single_call_entry;
  // A declared fingerprint cannot fall below its level before the clock is a window past `t`
  // (lift_time()); then the sweep re-judges it.
  struct expiry {
    double t = 0;
    fingerprint_key key;
  };
  // A fingerprint's rank in the top view: counted calls, then calls (only ever grow).
  struct top_slot {
    fingerprint_key key;
    std::uint64_t counted = 0, calls = 0;
  };
  struct swarm {
    double latest_t = 0;
    bool has_t = false;
    double expired = 0;            // swarm_row::expired
    protocol::cost spent, wasted;  // swarm totals (swarm_row)
    // The budget's level reached (derived from `spent`, recomputed at a restore) and when.
    severity budget_level = severity::none;
    double budget_t = 0;
    // Recent hand-offs, and the cycle at their end with the level it was declared at (derived
    // from the hand-offs, recomputed at a restore).
    handoff_log handoffs;
    std::optional<handoff_cycle> cycle;
    severity cycle_level = severity::none;
    std::vector<std::string> worker_names;
    std::unordered_map<std::string, std::uint32_t> worker_ids;
    // Fingerprints called once are held as single_call_entry (touch() shrinks them).
    fingerprint_table<fingerprint_key, entry, single_call_entry> fingerprints;
    // The read views, kept as events arrive so no view walks the fingerprints.
    std::uint64_t exact_calls = 0;  // calls of the exact fingerprints held
    std::unordered_set<fingerprint_key, fingerprint_key_hash> declared;  // level != none
    std::vector<top_slot> top;  // the kTopKept hottest, hottest first
    // A min-heap on `t` of the declared fingerprints (with lift_verdicts). An entry whose
    // fingerprint's queued_t differs is stale and skipped.
    std::vector<expiry> expiries;
    // Change tracking for take_changes().
    bool dirty = false;
    std::uint32_t workers_persisted = 0;
    // Fingerprints changed since the last take_changes(): each listed once while its entry's
    // `changed` is set; an entry erased (and perhaps created again) since may leave a stale or
    // a second listing, which take_changes() skips. No hashing per event.
    std::vector<fingerprint_key> changed;
    std::unordered_set<fingerprint_key, fingerprint_key_hash> erased;
  };

  double clock_time(const swarm& s, double t) const;  // the time an event counts at
  // Moves the swarm clock for `raw`; the event at its effective time (`raw` or `clocked`).
  const swarm_event& advance_clock(swarm& s, const swarm_event& raw, swarm_event& clocked) const;
  static std::uint32_t worker_id(swarm& s, const std::string& worker);
  // A charge event: its cost goes to the swarm's total and, when the worker's last call of a
  // fingerprint in the window counted, to that fingerprint's wasted cost.
  void charge(swarm& s, const swarm_event& e);
  // Adds a counted call's cost to the fingerprint; book() moves what a declared exact
  // fingerprint wasted and the swarm's total does not hold yet into that total.
  static void waste(swarm& s, const fingerprint_key& key, entry& f, const protocol::cost& c);
  static void book(swarm& s, const fingerprint_key& key, entry& f);
  // The swarm's budget: the level its spend reaches under its cap; judge_budget() raises the
  // swarm's level to it and returns the verdict to push (every level once); budget_verdict()
  // is the verdict of the level reached.
  severity budget_level_of(const std::string& name, const swarm& s) const;
  double budget_used(const std::string& name, const swarm& s) const;
  std::optional<protocol::verdict> judge_budget(const std::string& name, swarm& s);
  protocol::verdict budget_verdict(const std::string& name, const swarm& s) const;
  // Hand-off loops: the level a cycle reaches under the rule; judge_handoffs() adds the
  // hand-off `e` makes and appends the verdicts it causes (the lift of a cycle it breaks, then
  // a new level); handoff_verdict() is the verdict of the cycle at its level.
  severity handoff_level_of(const std::optional<handoff_cycle>& c) const;
  void judge_handoffs(const std::string& name, swarm& s, const swarm_event& e,
                      std::vector<protocol::verdict>& out);
  protocol::verdict handoff_verdict(const std::string& name, const swarm& s) const;
  // Counts the call; lifts the fingerprint's verdict into `lifted` when its counts fell below
  // it; returns what the call declared.
  std::optional<protocol::verdict> touch(const std::string& name, swarm& s,
                                         const fingerprint_key& key, const swarm_event& e,
                                         std::uint32_t worker,
                                         std::vector<protocol::verdict>& lifted);
  void expire(entry& f, double now) const;
  // `f` in either form (entry, single_call_entry).
  template <class E>
  static void mark_changed(swarm& s, const fingerprint_key& key, E& f) {
    if (f.changed) return;
    f.changed = true;
    s.changed.push_back(key);
  }
  // The read views: rank() after a fingerprint's counts grew, account() for a restored row,
  // forget() before an entry is erased (true when it held a top slot), rebuild_top() after.
  // Each takes a fingerprint in either form (entry, single_call_entry).
  template <class E>
  static void rank(swarm& s, const fingerprint_key& key, E& f);
  template <class E>
  void account(swarm& s, const fingerprint_key& key, E& f) const;
  template <class E>
  static bool forget(swarm& s, const fingerprint_key& key, const E& f);
  static void rebuild_top(swarm& s);
  void push_call(entry& f, const window_call& c) const;
  void pop_call(entry& f) const;
  static void tally(entry& f, const window_call& c);  // counts a windowed call in f.tallies
  struct judgement {
    severity level = severity::none;
    std::uint32_t calls = 0, workers = 0;
    bool by_cap = false;
  };
  judgement judge(const entry& f) const;
  // Raises the fingerprint's declared level to the judgement's; the verdict to push.
  protocol::verdict declare(const std::string& name, swarm& s, const fingerprint_key& key, entry& f,
                            const judgement& j, double t);
  void evict_if_needed(const std::string& name, swarm& s, const fingerprint_key& keep_a,
                       const fingerprint_key& keep_b, std::vector<protocol::verdict>& lifted);
  // Active verdicts (with lift_verdicts): whether the counts still meet the declared level;
  // lift() resets it to none and returns the verdict saying so; lift_time() is the earliest
  // the counts can fall below it (as long as no call is added); schedule() queues the
  // fingerprint for that time; sweep() re-judges every declared fingerprint whose time the
  // clock has passed by a window.
  bool still_meets(const entry& f) const;
  double lift_time(const entry& f) const;
  protocol::verdict lift(const std::string& name, swarm& s, const fingerprint_key& key, entry& f);
  void schedule(swarm& s, const fingerprint_key& key, entry& f) const;
  void sweep(const std::string& name, swarm& s, std::vector<protocol::verdict>& lifted);
  static std::uint32_t counted_workers(const entry& f);
  static void rebuild_tallies(entry& f);
  std::uint64_t digest_of(std::string_view name, const swarm& s) const;
  static swarm_row swarm_row_of(const std::string& name, const swarm& s);
  static void snapshot_into(const std::string& name, const swarm& s, state_snapshot& out);
  static fingerprint_stats row_of(const swarm& s, const fingerprint_key& key);  // present
  static void take_changed(const std::string& name, swarm& s, const fingerprint_key& key,
                           state_changes& out);
  void restore_small(swarm& s, const fingerprint_key& key, single&& f);
  void restore_full(swarm& s, const fingerprint_key& key, fingerprint_stats&& stats);
  protocol::verdict verdict_of(const std::string& name, const fingerprint_key& key, const entry& f,
                               bool by_cap) const;

  swarm_rules rules_;
  state_options options_;
  std::map<std::string, swarm, std::less<>> swarms_;
  std::vector<std::string> cleared_;  // completed since the last take_changes()
  std::uint64_t events_ = 0, verdicts_ = 0, lifted_ = 0, evictions_ = 0;
};

}  // namespace loopguard::daemon
