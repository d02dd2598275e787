// A fingerprint as a swarm's state holds it: the fields of its row (fingerprint_stats) in a
// compact form, and what the state derives from them. row() gives the row back unchanged, so
// snapshots, change sets and digests see exactly what fingerprint_stats would have held.
//
// Compact, because a daemon holds a million of these (docs/performance.md, "CPU per event and
// memory per fingerprint"): the tool and summary, written once, share one heap block behind one
// pointer (two strings took 64 bytes inline); what only a declared fingerprint needs (its
// report, its booked cost, its place in the lift queue) is out of line behind another, absent
// for the fingerprints never declared. The fields every call touches come first.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

#include "loopguard/protocol.hpp"
#include "loopguard/severity.hpp"
#include "state/call_window.hpp"
#include "state/compact_vector.hpp"
#include "state/state_rows.hpp"

namespace loopguard::daemon {

// A tool name and an argument summary in one heap block: [tool length][summary length], 32
// bits each, then the tool's bytes and the summary's. Both empty: no block.
class fingerprint_label {
 public:
  fingerprint_label() = default;
  fingerprint_label(std::string_view tool, std::string_view summary);
  fingerprint_label(const fingerprint_label& o) : fingerprint_label(o.tool(), o.summary()) {}
  fingerprint_label(fingerprint_label&&) noexcept = default;
  fingerprint_label& operator=(const fingerprint_label& o) {
    if (this != &o) *this = fingerprint_label(o);
    return *this;
  }
  fingerprint_label& operator=(fingerprint_label&&) noexcept = default;

  std::string_view tool() const;
  std::string_view summary() const;

 private:
  std::uint32_t length(std::size_t i) const;
  std::unique_ptr<char[]> block_;
};

// What a fingerprint keeps once declared: the report of its latest declaration or lift (the
// row's level_t, level_calls, level_workers), what its swarm's total has booked of its wasted
// cost, and the time of its entry in the swarm's lift queue (NaN: none).
struct declared_report {
  double level_t = 0;
  std::uint32_t level_calls = 0;
  std::uint32_t level_workers = 0;
  protocol::cost booked;
  double queued_t = std::numeric_limits<double>::quiet_NaN();
};

struct single_call_entry;

struct fingerprint_entry {
  // One worker's calls in the window (derived from `window`; rebuilt on restore).
  struct worker_tally {
    std::uint32_t worker = 0;
    std::uint32_t counted = 0;  // counted calls of this worker in the window
    std::uint32_t all = 0;      // all calls of this worker in the window
  };

  fingerprint_entry() = default;
  explicit fingerprint_entry(fingerprint_stats&& row) { assign(std::move(row)); }
  // The same fingerprint in this form (fingerprint_table's conversion).
  explicit fingerprint_entry(single_call_entry&& s);
  // Takes the row's fields (a restored row); the derived fields and the lift queue's time stay.
  void assign(fingerprint_stats&& row);
  fingerprint_stats row() const;

  // The row's fields, as in fingerprint_stats.
  std::uint64_t calls = 0;
  std::uint64_t counted = 0;
  double first_seen = 0;
  double last_seen = 0;
  call_window window;
  compact_vector<std::uint32_t, 2> workers;
  compact_vector<std::uint64_t, 1> results;
  // Derived from `window`.
  compact_vector<worker_tally, 1> tallies;
  protocol::cost wasted;
  fingerprint_label label;
  std::uint32_t window_counted = 0;
  severity level = severity::none;
  bool in_top = false;   // one of the swarm's `top` slots
  bool changed = false;  // listed in the swarm's `changed`

  double level_t() const { return report_ ? report_->level_t : 0; }
  std::uint32_t level_calls() const { return report_ ? report_->level_calls : 0; }
  std::uint32_t level_workers() const { return report_ ? report_->level_workers : 0; }
  protocol::cost booked() const { return report_ ? report_->booked : protocol::cost{}; }
  double queued_t() const {
    return report_ ? report_->queued_t : std::numeric_limits<double>::quiet_NaN();
  }
  bool queued() const { return !std::isnan(queued_t()); }
  // The out-of-line part, made on first use; absent for a fingerprint never declared.
  bool has_report() const { return report_ != nullptr; }
  declared_report& report() {
    if (!report_) report_ = std::make_unique<declared_report>();
    return *report_;
  }

 private:
  std::unique_ptr<declared_report> report_;
};

// A fingerprint called once: one worker, at most one result, nothing wasted, never declared.
// Most fingerprints of a large swarm are (a healthy agent seldom repeats a call exactly, and
// every call makes two fingerprints), so a swarm's table holds them in this form: 32 bytes
// instead of fingerprint_entry's 160 (docs/performance.md, "Fingerprints called once"). A
// second call, a charge or a declaration needs the full form (fingerprint_table converts it).
// The fields the state reads of any fingerprint have fingerprint_entry's names.
struct single_call_entry {
  static constexpr std::uint64_t calls = 1;
  static constexpr severity level = severity::none;

  single_call_entry() = default;
  explicit single_call_entry(fingerprint_entry&& f);    // fits(f)
  explicit single_call_entry(fingerprint_stats&& row);  // fits(row)
  // The same but for its label (a restore makes that on another thread: restore_batch).
  static single_call_entry unlabelled(const fingerprint_stats& row);  // fits(row)
  // Whether the fingerprint is one this form holds exactly (its row() gives it back).
  static bool fits(const fingerprint_entry& f);
  static bool fits(const fingerprint_stats& row);
  fingerprint_stats row() const;

  double last_seen = 0;  // the call's time, also its first_seen
  std::uint64_t result = 0;
  fingerprint_label label;
  std::uint32_t worker = 0;
  std::uint8_t counted = 0;  // 1: the call counted (it brought no new result)
  bool in_top = false;
  bool changed = false;
  bool has_result : 1 = false;
  bool in_window : 1 = false;  // the call is still in the window
};

}  // namespace loopguard::daemon
