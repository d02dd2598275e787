// ExecutionEconomicsManager::on_swarm_verdict: a verdict pushed by loopguardd becomes the SDK's
// verdict with one `global` detection and the daemon's message as the nudge text.
#include <variant>

#include "loopguard/protocol.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;
namespace protocol = loopguard::protocol;

namespace {

protocol::verdict pushed(severity level) {
  protocol::verdict v;
  v.swarm = "refactor-auth";
  v.tool = "search";
  v.kind = "exact";
  v.fingerprint = 0x9a3c55e0d1b27f48;
  v.level = level;
  v.calls = 10;
  v.workers = 5;
  v.message = "[loopguard] Swarm-wide dead end: `search` was called 10 times.";
  v.t = 1712.5;
  return v;
}

std::uint64_t counted(const ExecutionEconomicsManager& m, severity s) {
  return m.stats()
      .detections[static_cast<std::size_t>(detector_id::global)][static_cast<std::size_t>(s)];
}

}  // namespace

TEST_SUITE("swarm verdicts") {
  TEST_CASE("a warning becomes a nudge carrying the daemon's message verbatim") {
    ExecutionEconomicsManager m;
    step(m, "search", R"({"query":"auth"})", true, "no results");
    const verdict v = m.on_swarm_verdict(pushed(severity::warn));
    CHECK(v.action == action::nudge);
    CHECK(v.level == severity::warn);
    REQUIRE(v.detections.size() == 1);
    const auto& d = v.strongest();
    CHECK(d.detector == detector_id::global);
    CHECK(d.level == severity::warn);
    CHECK(d.message == pushed(severity::warn).message);
    CHECK(d.tool == "search");
    CHECK(d.count == 10);
    CHECK(d.confidence == 1.0);
    CHECK(d.suggestion.empty());
    CHECK(v.event_index == 1);  // the last event: the search's result
    CHECK(d.loop_start == 1);
  }

  TEST_CASE("critical nudges (a swarm verdict never rejects), terminate terminates") {
    ExecutionEconomicsManager m;
    CHECK(m.on_swarm_verdict(pushed(severity::critical)).action == action::nudge);
    const verdict stop = m.on_swarm_verdict(pushed(severity::terminate));
    CHECK(stop.action == action::terminate);
    CHECK(stop.level == severity::terminate);
    CHECK(m.stats().terminated == 1);
    CHECK(m.stats().rejected == 0);
    CHECK(counted(m, severity::critical) == 1);
    CHECK(counted(m, severity::terminate) == 1);
  }

  TEST_CASE("it is not an event: no rule runs and the index does not move") {
    ExecutionEconomicsManager m;
    CHECK(m.on_swarm_verdict(pushed(severity::warn)).event_index == 0);
    CHECK(m.events() == 0);
    CHECK(m.stats().checks == 0);
    // Nor does it count towards the agent's own loops: the first call of a run is still new.
    CHECK(step(m, "search", R"({"query":"auth"})", true, "no results").allowed());
    CHECK(m.events() == 2);
  }

  TEST_CASE("the override sees it like any verdict") {
    ExecutionEconomicsManager m;
    m.set_override([](verdict v) {
      if (!v.detections.empty() && v.strongest().detector == detector_id::global) {
        v.action = action::allow;
      }
      return v;
    });
    CHECK(m.on_swarm_verdict(pushed(severity::terminate)).action == action::allow);
    CHECK(m.stats().terminated == 0);
    CHECK(counted(m, severity::terminate) == 1);  // counted before the override
  }

  TEST_CASE("tool and message are repaired to valid UTF-8") {
    ExecutionEconomicsManager m;
    protocol::verdict p = pushed(severity::warn);
    p.tool =
        "se\xff"
        "arch";
    p.message = "stuck on \xc3";
    const verdict v = m.on_swarm_verdict(p);
    CHECK(v.strongest().tool ==
          "se\xef\xbf\xbd"
          "arch");
    CHECK(v.strongest().message == "stuck on \xef\xbf\xbd");
  }

  TEST_CASE("a verdict frame from the wire passes through unchanged") {
    const char* frame =
        R"({"type":"verdict","swarm":"s","tool":"grep","kind":"structural",)"
        R"("fingerprint":"9a3c55e0d1b27f48","level":"critical","calls":12,"workers":3,)"
        R"("message":"[loopguard] CRITICAL, swarm-wide dead end: stop.","t":3.5})";
    const auto parsed = protocol::parse(frame);
    REQUIRE(parsed.has_value());
    const protocol::message& msg = *parsed;
    REQUIRE(std::holds_alternative<protocol::verdict>(msg));
    ExecutionEconomicsManager m;
    const verdict v = m.on_swarm_verdict(std::get<protocol::verdict>(msg));
    CHECK(v.action == action::nudge);
    CHECK(v.strongest().level == severity::critical);
    CHECK(v.strongest().message == "[loopguard] CRITICAL, swarm-wide dead end: stop.");
    CHECK(v.strongest().count == 12);
  }
}
