#include <doctest/doctest.h>

#include "service/swarm_service.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::wire_event;

TEST_SUITE("swarm_service") {
  const worker_identity w1{"s1", "w1", "a"};

  TEST_CASE("resent events count once, a new incarnation starts afresh") {
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

  TEST_CASE("an undeclared gap is an error, a declared one is accepted") {
    swarm_service svc;
    auto r = svc.ingest(w1, {wire_event(1, 5, 0), wire_event(3, 5, 1)});
    CHECK(r.applied == 1);
    REQUIRE_FALSE(r.error.ok());
    CHECK(r.error.code() == "sequence_gap");
    const auto refused = svc.declare_gap(w1, 4, 5);  // 2..3 neither sent nor declared
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == "bad_gap");
    CHECK(refused.error().message() ==
          "gap starts at 4 but the next expected sequence number is 2: events 2..3 were neither "
          "sent nor declared lost");
    const auto declared = svc.declare_gap(w1, 2, 4);
    REQUIRE(declared.has_value());
    CHECK(*declared == r.epoch);
    r = svc.ingest(w1, {wire_event(5, 5, 2)});
    CHECK(r.applied == 1);
    CHECK(r.error.ok());
  }

  TEST_CASE("a gap that is not a range is refused") {
    swarm_service svc;
    const auto refused = svc.declare_gap(w1, 3, 2);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message() == "gap from 3 to 2 is not a range of sequence numbers");
    CHECK_FALSE(svc.declare_gap(w1, 0, 2).has_value());
  }

  TEST_CASE("complete: the epoch holding it, or an error when the swarm has no state") {
    swarm_service svc;
    const auto r = svc.ingest(w1, {wire_event(1, 5, 0)});
    const auto done = svc.complete("s1");
    REQUIRE(done.has_value());
    CHECK(*done == r.epoch);
    CHECK_FALSE(svc.complete("s1").has_value());  // already forgotten
    CHECK_FALSE(svc.complete("unknown").has_value());
  }

  TEST_CASE("acks wait for the checkpoint: durable_seq moves only with mark_durable") {
    swarm_service svc;
    const auto r = svc.ingest(w1, {wire_event(1, 5, 0)});
    CHECK(svc.durable_seq(w1) == 0);
    const auto c = svc.take_checkpoint();
    CHECK(c.epoch == r.epoch);
    CHECK(svc.durable_seq(w1) == 0);
    svc.mark_durable(c);
    CHECK(svc.durable_seq(w1) == 1);
    CHECK(svc.ingest(w1, {wire_event(2, 5, 0)}).epoch == c.epoch + 1);
  }
}
