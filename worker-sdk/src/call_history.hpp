// The calls one agent made recently, with their results once known. Internal to the SDK.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "loopguard/fingerprint.hpp"

namespace loopguard::sdk {

struct call_record {
  std::size_t event_index = 0;  // manager event index of the call
  // The model turn that made the call, from 1 (the manager's turn count): calls with only other
  // calls between them, after the turn's text if any, share it (the parallel calls of one
  // turn), and the rules that count attempts count a turn once.
  std::size_t turn = 0;
  std::string tool;
  std::string id;
  std::string peer;  // the worker the call hands work to; empty: none
  call_fingerprint fp;
  bool mutating = false;  // the call may change the world (an edit, a write, `rm`, ...)
  bool test_run = false;  // the call runs a test suite
  bool file_op = false;   // a shell command that reads or writes a file
  bool novel = false;     // no call with this exact fingerprint was made before it (in the history)
  // Known once the result arrives.
  bool answered = false;
  bool ok = true;
  std::uint64_t result = 0;   // result fingerprint
  bool unproductive = false;  // failed, or came back empty / "no results"
  std::string failure;        // failure_signature() of the output, when unproductive
  bool progress = false;      // a successful new change: breaks every repeat chain behind it
  bool barrier = false;       // a repeat rule fired here and restarts its count after it
  bool ran = true;            // false when the call was refused: no result will come

  // A new call that worked and answered something: exploration, which ends a window count of
  // the repeats around it (docs/detectors.md, "What counts as progress").
  bool informative() const { return novel && answered && ok && !unproductive; }
};

// Recent calls, newest last, at most `capacity` of them.
class call_history {
 public:
  explicit call_history(std::size_t capacity) : capacity_(capacity) {}

  void push(call_record&& r);
  // The oldest unanswered call with this id (if `id` is set) or of this tool; nullptr if none.
  call_record* find_open(std::string_view tool, std::string_view id);
  // How many of the newest calls (since the last restart) the newest `turns` turns made: a
  // window of attempts, as the parallel calls of one turn are one attempt. Calls of `open_turn`
  // (the turn of a call being judged, not yet pushed) are in it without counting as a turn.
  std::size_t calls_in_turns(std::size_t turns, std::size_t open_turn = 0) const;
  // True when a call with this exact fingerprint is already in the history (before `upto`).
  bool seen_exact(std::uint64_t exact, std::size_t upto) const;
  // The newest call was refused or the run stopped: it never ran, so no result pairs with it.
  // A call that never ran changed nothing: it is no progress either.
  void mark_not_run() {
    if (calls_.empty()) return;
    calls_.back().ran = false;
    calls_.back().progress = false;
  }

  // The repeat rules look back only at calls made after the last restart() (a user message or a
  // resume starts their counts afresh); results still pair with calls made before it.
  void restart() { hidden_ = calls_.size(); }

  // Calls since the last restart.
  std::size_t size() const { return calls_.size() - hidden_; }
  // i = 0 is the newest call; i < size().
  const call_record& newest(std::size_t i) const { return calls_[calls_.size() - 1 - i]; }
  const call_record* last() const { return calls_.empty() ? nullptr : &calls_.back(); }
  void clear() {
    calls_.clear();
    hidden_ = 0;
  }

 private:
  std::size_t capacity_;
  std::deque<call_record> calls_;
  std::size_t hidden_ = 0;  // the oldest calls, made before the last restart()
};

}  // namespace loopguard::sdk
