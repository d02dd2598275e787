// Hand-off loops (docs/protocol.md, "Hand-off loops"): the same work handed around the same
// workers again and again, found in the order of the swarm clock, told to those workers only.
#include <doctest/doctest.h>

#include <string>

#include "state/handoff_cycles.hpp"
#include "state/shared_economics_state.hpp"
#include "store/event_log.hpp"
#include "store/fingerprint_codec.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using protocol::cost;

namespace {

handoff hand(std::string from, std::string peer, std::uint64_t task, double t) {
  return {t, std::move(from), peer, handoff_fingerprint(task, peer), "delegate", {}};
}

// A call of `delegate` by `worker` handing `task` to `peer` (structural fingerprint = task).
swarm_event delegate(std::string worker, std::string peer, std::uint64_t task, double t,
                     cost spent = {}) {
  swarm_event e;
  e.swarm = "s1";
  e.worker = std::move(worker);
  e.tool = "delegate";
  e.summary = "task=" + std::to_string(task);
  e.exact = task * 7;
  e.structural = task;
  e.result = 7;
  e.t = t;
  e.spent = spent;
  e.peer = std::move(peer);
  return e;
}

std::vector<protocol::verdict> handoff_verdicts(const std::vector<protocol::verdict>& all) {
  std::vector<protocol::verdict> out;
  for (const auto& v : all) {
    if (v.kind == "handoff") out.push_back(v);
  }
  return out;
}

}  // namespace

TEST_SUITE("handoff") {
  TEST_CASE("a ring of hand-offs repeated is a cycle, a pipeline and a one-way stream are not") {
    handoff_log ping;
    for (int i = 0; i < 3; ++i) {
      ping.add(hand("a", "b", 1, 2 * i));
      ping.add(hand("b", "a", 2, 2 * i + 1));
    }
    auto c = ping.current_cycle(4);
    REQUIRE(c);
    CHECK(c->period == 2);
    CHECK(c->rounds == 3);
    CHECK(c->calls == 6);
    CHECK(c->workers == std::vector<std::string>{"a", "b"});
    ping.add(hand("a", "b", 1, 6));  // half a round more: counted in calls, not rounds
    CHECK(ping.current_cycle(4)->calls == 7);
    CHECK(ping.current_cycle(4)->rounds == 3);
    CHECK(ping.current_cycle(4)->key == c->key);  // the same ring from another hand-off

    handoff_log three;
    for (int i = 0; i < 2; ++i) {
      three.add(hand("a", "b", 1, 3 * i));
      three.add(hand("b", "c", 2, 3 * i + 1));
      three.add(hand("c", "a", 3, 3 * i + 2));
    }
    REQUIRE(three.current_cycle(4));
    CHECK(three.current_cycle(4)->period == 3);
    CHECK_FALSE(three.current_cycle(2));  // longer than allowed

    handoff_log pipeline;  // different work handed along: a → b → c, job after job
    for (int job = 0; job < 6; ++job) {
      pipeline.add(hand("a", "b", 100 + job, 2 * job));
      pipeline.add(hand("b", "c", 200 + job, 2 * job + 1));
    }
    CHECK_FALSE(pipeline.current_cycle(8));

    handoff_log stream;  // the same hand-off again and again, one way: no ring
    for (int i = 0; i < 6; ++i) stream.add(hand("a", "b", 1, i));
    CHECK_FALSE(stream.current_cycle(8));

    handoff_log changing;  // back and forth, but the work changes every time
    for (int i = 0; i < 6; ++i) changing.add(hand(i % 2 ? "b" : "a", i % 2 ? "a" : "b", 10 + i, i));
    CHECK_FALSE(changing.current_cycle(8));
  }

  TEST_CASE("hand-offs are ordered by the swarm clock, not by arrival") {
    handoff_log log;
    log.add(hand("a", "b", 1, 0));
    log.add(hand("a", "b", 1, 2));
    log.add(hand("b", "a", 2, 1));  // arrives late
    log.add(hand("b", "a", 2, 3));
    REQUIRE(log.current_cycle(4));
    CHECK(log.current_cycle(4)->rounds == 2);
    CHECK(log.entries()[1].from == "b");
  }

  TEST_CASE("the state: warn at 3 rounds, critical at 5, for the workers of the cycle only") {
    shared_economics_state s;
    s.apply(delegate("c", "", 50, 0));  // a third worker, no hand-off
    std::vector<protocol::verdict> got;
    for (int i = 0; i < 5; ++i) {
      for (auto v : s.apply(delegate("a", "b", 1, 1 + 2 * i, {1000, 0}))) got.push_back(v);
      for (auto v : s.apply(delegate("b", "a", 2, 2 + 2 * i, {1000, 0}))) got.push_back(v);
    }
    const auto h = handoff_verdicts(got);
    REQUIRE(h.size() == 2);
    CHECK(h[0].level == severity::warn);
    CHECK(h[0].calls == 6);
    CHECK(h[0].to == std::vector<std::string>{"a", "b"});
    CHECK(h[0].workers == 2);
    CHECK(h[0].spent == cost{6000, 0});
    CHECK(h[0].message ==
          "[Loopguard] Hand-off loop: the same work went around a \u2192 b \u2192 a 3 times (6 "
          "hand-offs via `delegate`) without changing (6.0k tokens spent on these hand-offs). "
          "Stop passing it back: one of you takes it on and finishes it, or reports what "
          "blocks it.");
    CHECK(h[1].level == severity::critical);
    CHECK(h[1].calls == 10);
    CHECK(h[1].message.starts_with("[Loopguard CRITICAL] Hand-off loop:"));
    CHECK(s.summary("s1")->verdicts == 1);
    const auto active = s.verdicts_as_pushed("s1");
    REQUIRE(active.size() == 1);
    CHECK(active[0].kind == "handoff");

    // A restore derives the cycle and its level: nothing pushed again, the same verdict.
    shared_economics_state again;
    again.restore(s.snapshot());
    CHECK(again.digest() == s.digest());
    const auto restored = again.verdicts_as_pushed("s1");
    REQUIRE(restored.size() == 1);
    CHECK(restored[0].level == severity::critical);
    CHECK(restored[0].message == active[0].message);

    // A different hand-off breaks the cycle: lifted, for the same workers.
    const auto broken = handoff_verdicts(s.apply(delegate("a", "c", 3, 20)));
    REQUIRE(broken.size() == 1);
    CHECK(broken[0].level == severity::none);
    CHECK(broken[0].to == std::vector<std::string>{"a", "b"});
    CHECK(broken[0].message.find("looks broken") != std::string::npos);
    CHECK(s.verdicts("s1").empty());
  }

  TEST_CASE("hand-offs survive the log (format 2) and the swarm row's blob") {
    shared_economics_state s;
    event_log_writer log;
    for (int i = 0; i < 4; ++i) {
      for (const auto& e : {delegate("a", "b", 1, 2 * i), delegate("b", "a", 2, 2 * i + 1)}) {
        s.apply(e);
        log.event(e);
      }
    }
    shared_economics_state replayed;
    REQUIRE(replay_log_record(log.take(), replayed).ok());
    CHECK(replayed.digest() == s.digest());
    REQUIRE(replayed.verdicts("s1").size() == 1);

    const auto snap = s.snapshot();
    REQUIRE(snap.swarms.size() == 1);
    std::string blob;
    encode_handoffs(snap.swarms[0].handoffs, blob);
    std::vector<handoff> back;
    REQUIRE(decode_handoffs(blob, back));
    CHECK(back == snap.swarms[0].handoffs);
    CHECK_FALSE(decode_handoffs(blob.substr(0, blob.size() - 1), back));
    CHECK_FALSE(decode_handoffs(blob + "x", back));
    CHECK(decode_handoffs("", back));
    CHECK(back.empty());
  }
}
