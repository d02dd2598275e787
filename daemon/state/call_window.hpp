// A fingerprint's sliding window of calls: a queue in arrival order, calls in at the back and
// out at the front, both O(1) amortised (erasing from the front of a vector was O(window) per
// call once the window is full). The calls stay in one vector: the front is an offset into it,
// and the departed prefix is dropped once it is as long as what remains, so a window never
// holds more than twice its calls, and a window of one call compacts at every departure. One
// call is held inline: most fingerprints are called once or twice in a window.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "state/compact_vector.hpp"

namespace loopguard::daemon {

// One call still inside the sliding window.
struct window_call {
  double t = 0;
  std::uint32_t worker = 0;  // index into the swarm's worker names
  bool counted = false;      // false: the call brought a new result (progress)
  friend bool operator==(const window_call&, const window_call&) = default;
};

class call_window {
 public:
  using value_type = window_call;
  using storage = compact_vector<window_call, 1>;
  using iterator = storage::iterator;
  using const_iterator = storage::const_iterator;
  using const_reverse_iterator = storage::const_reverse_iterator;

  call_window() = default;
  call_window(const call_window&) = default;
  call_window& operator=(const call_window&) = default;
  // A moved-from window is empty (its head too: a decoder reuses it).
  call_window(call_window&& o) noexcept
      : calls_(std::move(o.calls_)), head_(std::exchange(o.head_, 0)) {}
  call_window& operator=(call_window&& o) noexcept {
    calls_ = std::move(o.calls_);
    head_ = std::exchange(o.head_, 0);
    return *this;
  }
  ~call_window() = default;

  std::size_t size() const { return calls_.size() - head_; }
  bool empty() const { return size() == 0; }
  const window_call& front() const { return calls_[head_]; }
  const window_call& operator[](std::size_t i) const { return calls_[head_ + i]; }
  iterator begin() { return calls_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return calls_.end(); }
  const_iterator begin() const { return calls_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return calls_.end(); }
  const_reverse_iterator rbegin() const { return calls_.rbegin(); }
  const_reverse_iterator rend() const { return calls_.rend() - static_cast<std::ptrdiff_t>(head_); }

  void push_back(const window_call& c) { calls_.push_back(c); }
  void pop_front() {
    ++head_;
    if (head_ * 2 >= calls_.size()) compact();
  }
  // n calls, the ones kept first (a decoder fills them in).
  void resize(std::size_t n) {
    compact();
    calls_.resize(n);
  }

  friend bool operator==(const call_window& a, const call_window& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void compact() {
    calls_.erase(calls_.begin(), calls_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }

  storage calls_;
  std::uint32_t head_ = 0;  // calls_[0, head_) have left
};

}  // namespace loopguard::daemon
