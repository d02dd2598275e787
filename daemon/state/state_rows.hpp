// The values that cross the boundary between the pure swarm state and its checkpoint store:
// one row per fingerprint, worker name and swarm, a whole snapshot for a restore, and the
// changes since the last checkpoint (docs/storage.md).
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "loopguard/protocol.hpp"
#include "loopguard/severity.hpp"
#include "state/call_window.hpp"
#include "state/compact_vector.hpp"
#include "state/handoff_cycles.hpp"
#include "state/hash_seeds.hpp"

namespace loopguard::daemon {

enum class fingerprint_kind : std::uint8_t { exact = 0, structural = 1 };

constexpr const char* to_string(fingerprint_kind k) {
  return k == fingerprint_kind::exact ? "exact" : "structural";
}

struct fingerprint_key {
  fingerprint_kind kind = fingerprint_kind::exact;
  std::uint64_t value = 0;
  friend bool operator==(const fingerprint_key&, const fingerprint_key&) = default;
  friend auto operator<=>(const fingerprint_key&, const fingerprint_key&) = default;
};

// For the standard containers that hold fingerprint keys (a swarm's declared and erased sets).
// Keys come from clients: with the value itself as the hash, a client could send keys that all
// fall into one bucket (multiples of the bucket count) and make every insert and lookup walk
// it. The value is mixed with a random seed drawn once per process (hash_seeds.hpp), so which
// keys collide is unknown outside it.
// Nothing may depend on those containers' order.
struct fingerprint_key_hash {
  std::size_t operator()(const fingerprint_key& k) const noexcept {
    static const hash_seed seed = next_hash_seed();
    return static_cast<std::size_t>(mix(seed, k.value) ^ static_cast<std::uint64_t>(k.kind));
  }
};

// Whether two times or amounts are the same double bit for bit: what a row gives back must be
// what was stored, and == would take -0.0 for 0.0 (and never match a NaN).
inline bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Everything the swarm knows about one fingerprint.
struct fingerprint_stats {
  std::string tool;
  std::string summary;              // short human-readable argument summary
  std::uint64_t calls = 0;          // every call ever applied
  std::uint64_t counted = 0;        // calls that were not progress
  double first_seen = 0;            // lowest event time
  double last_seen = 0;             // highest event time
  severity level = severity::none;  // the active verdict's level; none: none (or lifted)
  double level_t = 0;               // event time of that declaration (or of the lift)
  std::uint32_t level_calls = 0;    // calls and workers the declaration (or lift) reported
  std::uint32_t level_workers = 0;
  // Most fingerprints have one or two workers, a short window and one result: those are held
  // inline (no allocation of their own; docs/performance.md, "CPU per event and memory per
  // fingerprint").
  compact_vector<std::uint32_t, 2> workers;  // every worker that called it, sorted
  call_window window;                        // arrival order
  compact_vector<std::uint64_t, 1> results;  // distinct results seen (bounded)
  protocol::cost wasted;                     // what its counted calls cost, as reported
  // The part of `wasted` in its swarm's wasted total (exact fingerprints): a fingerprint's cost
  // is booked there when it is declared a dead end, and from then on while it is one.
  protocol::cost booked;
  friend bool operator==(const fingerprint_stats&, const fingerprint_stats&) = default;
};

struct fingerprint_row {
  std::string swarm;
  fingerprint_key key;
  fingerprint_stats stats;
};

struct worker_row {
  std::string swarm;
  std::uint32_t id = 0;
  std::string name;
};

struct swarm_row {
  std::string swarm;
  double latest_t = 0;            // the highest event time seen: the swarm's clock for its window
  protocol::cost spent;           // every cost its workers reported
  protocol::cost wasted;          // what its declared dead ends burned (fingerprint_stats::booked)
  std::vector<handoff> handoffs;  // its recent hand-offs, by time
  // A tombstone (docs/operations.md, "Retention"): the daemon's wall clock (Unix seconds) when
  // the idle swarm was expired; it keeps only latest_t, spent and wasted. 0: a live swarm.
  double expired = 0;
};

struct fingerprint_ref {
  std::string swarm;
  fingerprint_key key;
};

struct state_snapshot {
  std::vector<swarm_row> swarms;
  std::vector<worker_row> workers;
  std::vector<fingerprint_row> fingerprints;
};

// What changed since the last take_changes(). A store applies it in this order: clear the
// cleared swarms (every row of them), then write swarms, workers, fingerprints, then erase.
struct state_changes {
  std::vector<std::string> cleared_swarms;
  std::vector<swarm_row> swarms;
  std::vector<worker_row> workers;
  std::vector<fingerprint_row> fingerprints;
  std::vector<fingerprint_ref> erased;

  bool empty() const {
    return cleared_swarms.empty() && swarms.empty() && workers.empty() && fingerprints.empty() &&
           erased.empty();
  }
  // Folds `newer` (taken later) into this set, so a failed checkpoint can be retried together
  // with what changed since: a later clear drops this set's rows of that swarm; later rows win.
  void merge_newer(state_changes&& newer);
};

}  // namespace loopguard::daemon
