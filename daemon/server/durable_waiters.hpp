// The sessions waiting for a checkpoint epoch to become durable, so that a group commit wakes
// only the sessions it acknowledges something for. Telling every session after every commit
// cost O(connections) per commit: with 1,000 connected workers at 1,000 events/s the daemon
// spent more than a core posting to sessions that had nothing to acknowledge
// (docs/performance.md, "Acks wake only the sessions that wait").
//
// A session waits for one epoch at a time (the oldest one it has unacknowledged batches for)
// and is dropped once told; it waits again for its next one. Values in and out, one mutex: the
// sessions call wait() on their strands, the checkpointer calls durable() after each commit.
// That mutex is what makes a wake-up impossible to lose: an ask either comes before a report
// (and is released by it) or after it (and is answered at once). A session that closes stays
// listed until its epoch is reported: at most one entry per session.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace loopguard::daemon {

template <typename Waiter>
class durable_waiters {
 public:
  // `w` waits for `epoch`. When `epoch` is durable already (its commit was reported before `w`
  // asked), `w` is not kept and the durable epoch is returned: the caller acknowledges at once.
  std::optional<std::uint64_t> wait(std::uint64_t epoch, Waiter w) {
    std::lock_guard lock(mu_);
    if (epoch <= durable_) return durable_;
    waiting_.emplace_back(epoch, std::move(w));
    return std::nullopt;
  }

  struct told {
    std::uint64_t epoch = 0;  // durable: the largest epoch reported so far
    // The waiters of that epoch or an earlier one, in the order they asked.
    std::vector<Waiter> waiters;
  };

  // Epoch `epoch` is durable: returns (and forgets) the waiters it releases. An epoch reported
  // out of order counts as the largest one seen (the checkpointer reports them in order).
  told durable(std::uint64_t epoch) {
    told out;
    std::lock_guard lock(mu_);
    durable_ = std::max(durable_, epoch);
    out.epoch = durable_;
    const auto later = std::stable_partition(waiting_.begin(), waiting_.end(),
                                             [&](const auto& p) { return p.first <= durable_; });
    out.waiters.reserve(static_cast<std::size_t>(later - waiting_.begin()));
    for (auto it = waiting_.begin(); it != later; ++it)
      out.waiters.push_back(std::move(it->second));
    waiting_.erase(waiting_.begin(), later);
    return out;
  }

  std::size_t size() const {
    std::lock_guard lock(mu_);
    return waiting_.size();
  }

 private:
  mutable std::mutex mu_;  // guards durable_ and waiting_
  std::uint64_t durable_ = 0;
  std::vector<std::pair<std::uint64_t, Waiter>> waiting_;
};

}  // namespace loopguard::daemon
