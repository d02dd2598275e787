// durable_waiters: a group commit tells the sessions that wait for its epoch (or an earlier
// one) and no other; a session that asks after its epoch was reported hears it at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
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
    CHECK(w.durable(2) == std::vector<std::string>{"a1", "b2"});
    CHECK(w.size() == 2);
    CHECK(w.durable(2).empty());  // told once
    CHECK(w.durable(4) == std::vector<std::string>{"c3", "d4"});
    CHECK(w.size() == 0);
  }

  TEST_CASE("nobody waiting: a commit tells nobody") {
    durable_waiters<int> w;
    CHECK(w.durable(1).empty());
    CHECK(w.durable(7).empty());
  }

  TEST_CASE("asking for an epoch already durable answers at once and keeps nothing") {
    durable_waiters<int> w;
    CHECK(w.durable(5).empty());
    CHECK(w.wait(5, 1) == std::optional<std::uint64_t>(5));
    CHECK(w.wait(2, 2) == std::optional<std::uint64_t>(5));
    CHECK(w.size() == 0);
    CHECK_FALSE(w.wait(6, 3).has_value());
    CHECK(w.size() == 1);
  }

  TEST_CASE("an epoch reported late never moves the durable epoch back") {
    durable_waiters<int> w;
    CHECK(w.durable(9).empty());
    CHECK(w.durable(4).empty());
    CHECK(w.wait(8, 1) == std::optional<std::uint64_t>(9));
    CHECK_FALSE(w.wait(10, 2).has_value());
  }

  TEST_CASE("concurrent waiters and commits: every waiter is told exactly once") {
    // Four threads each wait for epochs 1..N in turn (a session waits for its next epoch only
    // after hearing the last one, as websocket_session does); one thread reports commits.
    constexpr std::size_t kThreads = 4;
    constexpr std::uint64_t kEpochs = 2000;
    durable_waiters<std::size_t> w;
    std::vector<std::atomic<std::uint64_t>> heard(kThreads);
    std::vector<std::thread> sessions;
    for (std::size_t t = 0; t < kThreads; ++t) {
      sessions.emplace_back([&, t] {
        for (std::uint64_t e = 1; e <= kEpochs; ++e) {
          if (w.wait(e, t)) {
            heard[t] += 1;  // durable already
            continue;
          }
          while (heard[t].load() < e) std::this_thread::yield();  // told by the committer
        }
      });
    }
    std::thread committer([&] {
      for (std::uint64_t e = 1; e <= kEpochs + 1; ++e) {
        // Keep reporting until every session has heard this epoch (a real committer commits
        // again when nudged; here every pass reports the same epoch again).
        for (;;) {
          for (const std::size_t t : w.durable(e)) heard[t] += 1;
          bool all = true;
          for (auto& h : heard) all = all && h.load() >= std::min(e, kEpochs);
          if (all) break;
          std::this_thread::yield();
        }
      }
    });
    for (auto& s : sessions) s.join();
    committer.join();
    for (auto& h : heard) CHECK(h.load() == kEpochs);
    CHECK(w.size() == 0);
  }
}
