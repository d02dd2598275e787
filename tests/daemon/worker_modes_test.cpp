// worker_modes: the observing workers per swarm, as their latest hello said (feature observe).
#include <doctest/doctest.h>

#include "service/worker_modes.hpp"

using loopguard::daemon::worker_modes;
using name_set = std::set<std::string, std::less<>>;

TEST_SUITE("worker modes") {
  TEST_CASE("the latest hello decides, swarms are apart, an enforcing hello forgets") {
    worker_modes m;
    m.set("a", "w1", true);
    m.set("a", "w0", true);
    m.set("b", "w0", true);
    m.set("a", "w2", false);
    CHECK(m.observing("a") == name_set{"w0", "w1"});
    CHECK(m.observing("b") == name_set{"w0"});
    CHECK(m.observing("c").empty());
    m.set("a", "w1", true);  // a reconnect says it again
    CHECK(m.size() == 3);
    m.set("a", "w1", false);
    m.set("b", "w0", false);
    CHECK(m.observing("a") == name_set{"w0"});
    CHECK(m.observing("b").empty());
    CHECK(m.size() == 1);
  }

  TEST_CASE("bounded: beyond kMaxWorkers a new observing worker is not kept") {
    worker_modes m;
    for (std::size_t i = 0; i < worker_modes::kMaxWorkers; ++i) {
      m.set("s", "w" + std::to_string(i), true);
    }
    m.set("s", "late", true);
    CHECK(m.size() == worker_modes::kMaxWorkers);
    CHECK_FALSE(m.observing("s").contains("late"));
    m.set("s", "w0", false);
    m.set("s", "late", true);
    CHECK(m.observing("s").contains("late"));
  }
}
