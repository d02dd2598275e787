// durable_waiters: a group commit tells the sessions that wait for its epoch (or an earlier
// one) and no other; a session that asks after its epoch was reported hears it at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/durable_waiters.hpp"

using loopguard::daemon::durable_waiters;

TEST_SUITE("durable waiters") {
  TEST_CASE("a commit takes the waiters of its epoch and earlier ones, in the order they asked") {
    durable_waiters<std::string> w;
    CHECK_FALSE(w.wait(3, "c3").has_value());
    CHECK_FALSE(w.wait(1, "a1").has_value());
    CHECK_FALSE(w.wait(2, "b2").has_value());
    CHECK_FALSE(w.wait(4, "d4").has_value());
    CHECK(w.size() == 4);
    CHECK(w.durable(2).waiters == std::vector<std::string>{"a1", "b2"});
    CHECK(w.size() == 2);
    CHECK(w.durable(2).waiters.empty());  // told once
    CHECK(w.durable(4).waiters == std::vector<std::string>{"c3", "d4"});
    CHECK(w.size() == 0);
  }

  TEST_CASE("nobody waiting: a commit tells nobody") {
    durable_waiters<int> w;
    CHECK(w.durable(1).waiters.empty());
    CHECK(w.durable(7).waiters.empty());
  }

  TEST_CASE("asking for an epoch already durable answers at once and keeps nothing") {
    durable_waiters<int> w;
    CHECK(w.durable(5).waiters.empty());
    CHECK(w.wait(5, 1) == std::optional<std::uint64_t>(5));
    CHECK(w.wait(2, 2) == std::optional<std::uint64_t>(5));
    CHECK(w.size() == 0);
    CHECK_FALSE(w.wait(6, 3).has_value());
    CHECK(w.size() == 1);
  }

  TEST_CASE("an epoch reported late never moves the durable epoch back") {
    durable_waiters<int> w;
    CHECK_FALSE(w.wait(7, 1).has_value());
    CHECK(w.durable(9).waiters == std::vector<int>{1});
    const auto late = w.durable(4);
    CHECK(late.epoch == 9);  // what the waiters it releases are told
    CHECK(late.waiters.empty());
    CHECK(w.wait(8, 1) == std::optional<std::uint64_t>(9));
    CHECK_FALSE(w.wait(10, 2).has_value());
    CHECK(w.durable(3).waiters.empty());
    CHECK(w.durable(10).waiters == std::vector<int>{2});
  }

  TEST_CASE("concurrent waiters and commits: every waiter is told exactly once, none is lost") {
    // Four threads each wait for epochs 1..N in turn (a session waits for its next epoch only
    // after hearing the last one, as websocket_session does). The committer reports each epoch
    // once, as the checkpointer does, and then expects every thread to hear it: a thread that
    // asked just after the report must be answered by wait() itself. A lost wake-up fails the
    // check after a deadline instead of hanging.
    constexpr std::size_t kThreads = 4;
    constexpr std::uint64_t kEpochs = 2000;
    durable_waiters<std::size_t> w;
    std::vector<std::atomic<std::uint64_t>> heard(kThreads);
    std::atomic<bool> lost{false};
    std::atomic<std::uint64_t> answered_at_once{0};
    std::vector<std::thread> sessions;
    for (std::size_t t = 0; t < kThreads; ++t) {
      sessions.emplace_back([&, t] {
        for (std::uint64_t e = 1; e <= kEpochs && !lost; ++e) {
          if (w.wait(e, t)) {
            heard[t] += 1;
            answered_at_once += 1;
            continue;
          }
          while (heard[t].load() < e && !lost) std::this_thread::yield();  // told by the committer
        }
      });
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (std::uint64_t e = 1; e <= kEpochs && !lost; ++e) {
      const auto told = w.durable(e);
      CHECK(told.epoch == e);
      for (const std::size_t t : told.waiters) heard[t] += 1;
      for (;;) {
        bool all = true;
        for (auto& h : heard) all = all && h.load() >= e;
        if (all) break;
        if (std::chrono::steady_clock::now() > deadline) {
          lost = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    for (auto& s : sessions) s.join();
    CHECK_FALSE(lost.load());
    for (auto& h : heard) CHECK(h.load() == kEpochs);
    CHECK(w.size() == 0);
    MESSAGE("answered at once by wait(): " << answered_at_once.load() << " of "
                                           << kThreads * kEpochs);
  }
}
