// Observe mode (shadow mode, manager_config::mode): every verdict the manager returns is allow,
// with `would_have` the action enforce mode returns for the same events; the detections, the
// level and the counts are enforce's.
#include <algorithm>
#include <string>
#include <vector>

#include "loopguard/config.hpp"
#include "loopguard/fingerprint.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/verdict_json.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::guard_mode;
using loopguard::manager_config;
using loopguard::severity;
using nlohmann::json;
namespace protocol = loopguard::protocol;

namespace {

manager_config observing(manager_config c = {}) {
  c.mode = guard_mode::observe;
  return c;
}

// Enforce's verdict and observe's for the same event agree on everything but the action.
void check_shadow(const verdict& enforced, const verdict& observed) {
  CHECK(observed.action == action::allow);
  CHECK(observed.allowed());
  REQUIRE(observed.would_have.has_value());
  CHECK(*observed.would_have == enforced.action);
  CHECK_FALSE(enforced.would_have.has_value());
  CHECK(observed.level == enforced.level);
  CHECK(observed.event_index == enforced.event_index);
  REQUIRE(observed.detections.size() == enforced.detections.size());
  for (std::size_t i = 0; i < enforced.detections.size(); ++i) {
    CHECK(observed.detections[i].detector == enforced.detections[i].detector);
    CHECK(observed.detections[i].level == enforced.detections[i].level);
    CHECK(observed.detections[i].count == enforced.detections[i].count);
    CHECK(observed.detections[i].message == enforced.detections[i].message);
  }
}

// A verdict from loopguardd about the exact fingerprint of search({"query":"auth"}).
protocol::verdict swarm_verdict(severity level) {
  protocol::verdict v;
  v.swarm = "s";
  v.tool = "search";
  v.kind = "exact";
  v.fingerprint = loopguard::fingerprinter().of_call_text("search", R"({"query":"auth"})").exact;
  v.level = level;
  v.calls = 20;
  v.workers = 3;
  v.message = "[Loopguard] Swarm-wide dead end: `search`.";
  return v;
}

}  // namespace

TEST_SUITE("observe mode") {
  TEST_CASE("mode is read from the configuration: enforce by default, a bad value names the key") {
    CHECK(manager_config{}.mode == guard_mode::enforce);
    auto c = loopguard::parse_config(json::object());
    REQUIRE(c.has_value());
    CHECK(c->mode == guard_mode::enforce);
    c = loopguard::parse_config(json{{"preset", "aggressive"}, {"mode", "observe"}});
    REQUIRE(c.has_value());
    CHECK(c->mode == guard_mode::observe);
    CHECK(c->preset == "aggressive");
    CHECK(loopguard::to_json(*c).at("mode") == "observe");
    CHECK(loopguard::to_json(*loopguard::parse_config(loopguard::to_json(*c))) ==
          loopguard::to_json(*c));
    const auto bad = loopguard::parse_config(json{{"mode", "shadow"}});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() == R"(mode: expected one of enforce, observe, got "shadow")");
    const auto mistyped = loopguard::parse_config(json{{"mode", true}});
    REQUIRE_FALSE(mistyped.has_value());
    CHECK(mistyped.error().message() == "mode: expected one of enforce, observe, got true");
  }

  TEST_CASE("local rules: every action is allow, would_have is enforce's, the detections stay") {
    ExecutionEconomicsManager enforce, observe(observing());
    std::vector<action> seen;
    for (int i = 0; i < 40; ++i) {
      const std::string args = R"({"path":"a.txt"})";
      const verdict e = enforce.on_tool_call_json("read_file", args);
      const verdict o = observe.on_tool_call_json("read_file", args);
      CAPTURE(i);
      check_shadow(e, o);
      seen.push_back(e.action);
    }
    // The run went through nudges and rejections, and every one of them was only observed.
    CHECK(std::count(seen.begin(), seen.end(), action::nudge) > 0);
    CHECK(std::count(seen.begin(), seen.end(), action::reject) > 0);
    // The counts say what would have happened.
    CHECK(enforce.stats().rejected > 0);
    CHECK(observe.stats().rejected == enforce.stats().rejected);
    CHECK(observe.stats().terminated == enforce.stats().terminated);
    CHECK(observe.stats().detections == enforce.stats().detections);
  }

  TEST_CASE("a call enforce would reject runs in observe mode: its result pairs with it") {
    ExecutionEconomicsManager observe(observing());
    std::vector<loopguard::judged_call> sent;
    observe.set_call_sink([&](const loopguard::judged_call& c) { sent.push_back(c); });
    bool would_reject = false;
    for (int i = 0; i < 8 && !would_reject; ++i) {
      const std::string id = "c" + std::to_string(i);
      const verdict v = observe.on_tool_call_json("read_file", R"({"path":"a.txt"})", id);
      would_reject = v.would_have == action::reject;
      CHECK(v.action == action::allow);
      observe.on_tool_result("read_file", true, "same text", id);
    }
    REQUIRE(would_reject);
    // Not refused: every call went to the sink with its result, none at once without one.
    REQUIRE_FALSE(sent.empty());
    for (const auto& c : sent) CHECK(c.result.has_value());
  }

  TEST_CASE("a critical swarm verdict that would reject a call: allow, would_have reject") {
    ExecutionEconomicsManager enforce, observe(observing());
    for (auto* m : {&enforce, &observe}) m->on_swarm_verdict(swarm_verdict(severity::critical));
    const verdict e = enforce.on_tool_call_json("search", R"({"query":"auth"})");
    const verdict o = observe.on_tool_call_json("search", R"({"query":"auth"})");
    CHECK(e.action == action::reject);
    check_shadow(e, o);
    CHECK(fired(o, detector_id::global));
    CHECK(get(o, detector_id::global).level == severity::critical);
    // While the verdict is active, every matching call would be rejected again.
    check_shadow(enforce.on_tool_call_json("search", R"({"query":"auth"})"),
                 observe.on_tool_call_json("search", R"({"query":"auth"})"));
    CHECK(observe.stats().rejected == 2);
  }

  TEST_CASE("terminate: the loop that comes back a third time, and a swarm verdict of terminate") {
    ExecutionEconomicsManager enforce, observe(observing());
    // The same loop three times, a new edit between the episodes (manager_test's run).
    bool terminated = false;
    for (int episode = 0; episode < 3; ++episode) {
      for (int i = 0; i < 3; ++i) {
        const verdict e = enforce.on_tool_call_json("bash", R"({"command":"ls"})");
        const verdict o = observe.on_tool_call_json("bash", R"({"command":"ls"})");
        check_shadow(e, o);
        terminated = terminated || e.action == action::terminate;
        check_shadow(enforce.on_tool_result("bash", true, ""),
                     observe.on_tool_result("bash", true, ""));
      }
      const std::string edit = R"({"path":"f)" + std::to_string(episode) + R"("})";
      check_shadow(enforce.on_tool_call_json("write_file", edit),
                   observe.on_tool_call_json("write_file", edit));
      check_shadow(enforce.on_tool_result("write_file", true, "ok"),
                   observe.on_tool_result("write_file", true, "ok"));
    }
    CHECK(terminated);
    CHECK(observe.stats().terminated == enforce.stats().terminated);

    ExecutionEconomicsManager swarm_observer(observing());
    swarm_observer.on_swarm_verdict(swarm_verdict(severity::terminate));
    const verdict v = swarm_observer.on_text("thinking");
    CHECK(v.action == action::allow);
    CHECK(v.would_have == action::terminate);
    CHECK(v.level == severity::terminate);
  }

  TEST_CASE("limits: a run past its limit goes on, each verdict would have terminated it") {
    manager_config c;
    c.limit.max_consecutive_failures = 3;
    // Only the limit judges: failures alike would also trip the call rules (and a rejected call
    // gets no result, so the two runs would part).
    c.similar_args.enabled = c.result.enabled = c.test_fix.enabled = false;
    ExecutionEconomicsManager enforce(c), observe(observing(c));
    std::size_t would_terminate = 0;
    for (int i = 0; i < 6; ++i) {
      const std::string args = R"({"n":)" + std::to_string(i) + "}";
      check_shadow(enforce.on_tool_call_json("job", args), observe.on_tool_call_json("job", args));
      const verdict e = enforce.on_tool_result("job", false, "error " + std::to_string(i));
      const verdict o = observe.on_tool_result("job", false, "error " + std::to_string(i));
      check_shadow(e, o);
      if (o.would_have == action::terminate) {
        ++would_terminate;
        CHECK(fired(o, detector_id::limit));
      }
    }
    CHECK(would_terminate > 0);
    CHECK(observe.stats().terminated == enforce.stats().terminated);
  }

  TEST_CASE("the override runs first: observe mode applies to whatever leaves the manager") {
    ExecutionEconomicsManager observe(observing());
    observe.set_override([](verdict v) {
      v.action = action::reject;
      return v;
    });
    const verdict v = observe.on_tool_call_json("read", R"({"path":"a"})");
    CHECK(v.action == action::allow);
    CHECK(v.would_have == action::reject);
    CHECK(observe.stats().rejected == 1);
    // A plain allow carries would_have allow: observe mode is visible on every verdict.
    observe.set_override({});
    CHECK(observe.on_text("hello").would_have == action::allow);
  }

  TEST_CASE("the verdict JSON carries would_have in observe mode only") {
    ExecutionEconomicsManager enforce, observe(observing());
    CHECK(loopguard::verdict_json(enforce.on_text("hi")) ==
          R"({"action":"allow","level":"none","event_index":0,"detections":[]})");
    CHECK(
        loopguard::verdict_json(observe.on_text("hi")) ==
        R"({"action":"allow","level":"none","event_index":0,"detections":[],"would_have":"allow"})");
    verdict rejected;
    rejected.action = action::allow;
    rejected.would_have = action::reject;
    CHECK(loopguard::verdict_json(rejected).ends_with(R"("detections":[],"would_have":"reject"})"));
  }
}
