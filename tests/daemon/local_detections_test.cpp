// The local detections workers report, kept for the API: the last few and counts, bounded.
#include <doctest/doctest.h>

#include "service/local_detections.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

protocol::detection detection_of(std::string detector, severity level = severity::warn,
                                 double t = 0) {
  protocol::detection d;
  d.detector = std::move(detector);
  d.level = level;
  d.count = 3;
  d.tool = "bash";
  d.message = "[Loopguard] stuck";
  d.t = t;
  return d;
}

}  // namespace

TEST_SUITE("local detections") {
  TEST_CASE("the last kKept per worker, oldest first, and counts per detector and level") {
    local_detections l;
    for (int i = 0; i < 25; ++i) l.add("s", "w1", detection_of("exact", severity::warn, i));
    l.add("s", "w1", detection_of("cycle", severity::critical, 25));
    l.add("s", "w0", detection_of("exact", severity::terminate, 26));
    l.add("other", "w9", detection_of("exact"));
    const auto workers = l.of_swarm("s");
    REQUIRE(workers.size() == 2);
    CHECK(workers[0].name == "w0");
    CHECK(workers[0].total == 1);
    CHECK(workers[0].counts.at("exact")[2] == 1);
    const auto& w1 = workers[1];
    CHECK(w1.total == 26);
    REQUIRE(w1.last.size() == local_detections::kKept);
    CHECK(w1.last.front().t == 6);
    CHECK(w1.last.back().detector == "cycle");
    CHECK(w1.counts.at("exact")[0] == 25);
    CHECK(w1.counts.at("cycle")[1] == 1);
    CHECK(l.of_swarm("nope").empty());
  }

  TEST_CASE("memory is bounded: messages cut, detector names capped, workers evicted") {
    local_detections l;
    auto long_one = detection_of("exact");
    long_one.message = std::string(1000, 'x');
    l.add("s", "w", long_one);
    CHECK(l.of_swarm("s")[0].last[0].message.size() == local_detections::kMaxMessageBytes);
    for (std::size_t i = 0; i < 2 * local_detections::kMaxDetectors; ++i) {
      l.add("s", "w", detection_of("d" + std::to_string(i)));
    }
    const auto counts = l.of_swarm("s")[0].counts;  // a copy: of_swarm returns a temporary
    CHECK(counts.size() == local_detections::kMaxDetectors + 1);
    CHECK(counts.at("other")[0] == local_detections::kMaxDetectors + 1);
    // The worker that reported least recently goes first.
    for (std::size_t i = 0; i < local_detections::kMaxWorkers; ++i) {
      l.add("t", test::worker_name(static_cast<long>(i)), detection_of("exact"));
    }
    CHECK(l.workers() == local_detections::kMaxWorkers);
    CHECK(l.of_swarm("s").empty());
    l.add("t", "w0", detection_of("exact"));  // w0 becomes the newest
    l.add("u", "new", detection_of("exact"));
    CHECK(l.of_swarm("t").size() == local_detections::kMaxWorkers - 1);
    CHECK(l.of_swarm("t")[0].name == "w0");  // w1 was evicted, not w0
    CHECK(l.of_swarm("t")[1].name == "w10");
  }

  TEST_CASE("forget drops a swarm's workers") {
    local_detections l;
    l.add("s", "a", detection_of("exact"));
    l.add("s", "b", detection_of("exact"));
    l.add("t", "a", detection_of("exact"));
    l.forget("s");
    CHECK(l.of_swarm("s").empty());
    CHECK(l.workers() == 1);
  }
}
