#include <doctest/doctest.h>

#include <deque>
#include <random>

#include "state/call_window.hpp"
#include "state/shared_economics_state.hpp"
#include "store/fingerprint_codec.hpp"

using namespace loopguard::daemon;

TEST_SUITE("call window") {
  TEST_CASE("a window behaves as a queue under any mix of pushes and pops") {
    std::mt19937 rng(7);
    call_window w;
    std::deque<window_call> model;
    for (int step = 0; step < 20000; ++step) {
      if (model.empty() || rng() % 3 != 0) {
        const window_call c{double(step), static_cast<std::uint32_t>(rng() % 5), rng() % 2 == 0};
        w.push_back(c);
        model.push_back(c);
      } else {
        REQUIRE(w.front() == model.front());
        w.pop_front();
        model.pop_front();
      }
      REQUIRE(w.size() == model.size());
      if (step % 997 == 0) {
        CHECK(std::equal(w.begin(), w.end(), model.begin(), model.end()));
        CHECK(std::equal(w.rbegin(), w.rend(), model.rbegin(), model.rend()));
        for (std::size_t i = 0; i < model.size(); i += 17) CHECK(w[i] == model[i]);
      }
    }
  }

  TEST_CASE("equality and resize see only the calls still in the window") {
    call_window a, b;
    for (int i = 0; i < 6; ++i) a.push_back({double(i), 1, true});
    for (int i = 0; i < 3; ++i) a.pop_front();  // a holds 3, 4, 5
    for (int i = 3; i < 6; ++i) b.push_back({double(i), 1, true});
    CHECK(a == b);
    a.resize(4);
    CHECK(a.size() == 4);
    CHECK(a.front().t == 3);
    CHECK(a[3] == window_call{});
  }

  TEST_CASE("a window moved from is empty and takes calls again") {
    for (const bool assign : {false, true}) {
      CAPTURE(assign);
      call_window a;
      for (int i = 0; i < 6; ++i) a.push_back({double(i), 1, true});
      for (int i = 0; i < 2; ++i) a.pop_front();  // departed calls still in its storage
      call_window b;
      if (assign) {
        b = std::move(a);
      } else {
        call_window moved(std::move(a));
        b = moved;
      }
      CHECK(b.size() == 4);
      CHECK(b.front().t == 2);
      CHECK(a.empty());  // NOLINT(bugprone-use-after-move): what a decoder reuses
      a.resize(2);       // as a decoder does
      CHECK(a.size() == 2);
      a.push_back({9, 2, false});
      CHECK(a.size() == 3);
      CHECK(a[2].t == 9);
    }
  }

  TEST_CASE("a window past its max_window_calls drops its oldest calls, and encodes as it is") {
    swarm_rules rules;
    rules.max_window_calls = 12;
    rules.threshold = 12;
    rules.absolute_cap = 12;
    rules.critical_at = 0;
    shared_economics_state s(rules);
    swarm_event e;
    e.swarm = "s";
    e.tool = "search";
    e.exact = 1;
    e.structural = 2;
    e.result = 3;
    e.ok = false;
    for (int i = 0; i < 100; ++i) {
      e.worker = i % 2 ? "a" : "b";
      e.t = i;
      (void)s.apply(e);
    }
    const auto rows = s.top_fingerprints("s", 10);
    REQUIRE_FALSE(rows.empty());
    for (const auto& r : rows) {
      CHECK(r.stats.window.size() == 12);
      CHECK(r.stats.window.front().t == 88);  // the 12 newest: 88..99
      CHECK(r.stats.calls == 100);
      std::string blob;
      encode_fingerprint(r.stats, blob);
      fingerprint_stats back;
      REQUIRE(decode_fingerprint(blob, back));
      CHECK(back == r.stats);
    }
  }
}
