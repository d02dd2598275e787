#include <doctest/doctest.h>

#include "service/swarm_service.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::wire_event;

TEST_SUITE("swarm_service") {
  const worker_identity w1{"s1", "w1", "a"};

  TEST_CASE("resent events count once; a new incarnation starts afresh") {
    swarm_service svc;
    auto r = svc.ingest(w1, {wire_event(1, 5, 0), wire_event(2, 5, 1)});
    CHECK(r.applied == 2);
    CHECK(r.last_seq == 2);
    r = svc.ingest(w1, {wire_event(1, 5, 0), wire_event(2, 5, 1), wire_event(3, 5, 2)});
    CHECK(r.duplicates == 2);
    CHECK(r.applied == 1);
    r = svc.ingest({"s1", "w1", "b"}, {wire_event(1, 5, 3)});
    CHECK(r.applied == 1);
    const auto calls = svc.read([](const shared_economics_state& s) {
      return s.top_fingerprints("s1", 1).at(0).stats.calls;
    });
    CHECK(calls == 4);
  }

  TEST_CASE("an undeclared gap is an error; a declared one is accepted") {
    swarm_service svc;
    auto r = svc.ingest(w1, {wire_event(1, 5, 0), wire_event(3, 5, 1)});
    CHECK(r.applied == 1);
    REQUIRE(r.error.has_value());
    CHECK(r.error->code == "sequence_gap");
    std::uint64_t epoch = 0;
    CHECK(svc.declare_gap(w1, 4, 5, epoch).has_value());  // 2..3 neither sent nor declared
    CHECK_FALSE(svc.declare_gap(w1, 2, 4, epoch).has_value());
    r = svc.ingest(w1, {wire_event(5, 5, 2)});
    CHECK(r.applied == 1);
    CHECK_FALSE(r.error.has_value());
  }

  TEST_CASE("acks wait for the checkpoint: durable_seq moves only with mark_durable") {
    swarm_service svc;
    const auto r = svc.ingest(w1, {wire_event(1, 5, 0)});
    CHECK(svc.durable_seq(w1) == 0);
    std::uint64_t epoch = 0;
    const auto c = svc.take_checkpoint(epoch);
    CHECK(epoch == r.epoch);
    CHECK(svc.durable_seq(w1) == 0);
    svc.mark_durable(c);
    CHECK(svc.durable_seq(w1) == 1);
    CHECK(svc.ingest(w1, {wire_event(2, 5, 0)}).epoch == epoch + 1);
  }
}
