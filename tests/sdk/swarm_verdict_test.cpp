// ExecutionEconomicsManager::on_swarm_verdict: a verdict pushed by loopguardd is recorded; the
// next verdict the manager returns carries it as a `global` detection with the daemon's message
// as the nudge text, and while it is active at critical a matching call is rejected.
#include <variant>

#include "loopguard/fingerprint.hpp"
#include "loopguard/hex.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::fingerprinter;
using loopguard::severity;
namespace protocol = loopguard::protocol;

namespace {

constexpr const char* kSearch = R"({"query":"auth"})";

loopguard::call_fingerprint search_fp(const char* args = kSearch) {
  return fingerprinter().of_call_text("search", args);
}

// A verdict about the exact fingerprint of search(kSearch).
protocol::verdict pushed(severity level) {
  protocol::verdict v;
  v.swarm = "refactor-auth";
  v.tool = "search";
  v.kind = "exact";
  v.fingerprint = search_fp().exact;
  v.level = level;
  v.calls = 10;
  v.workers = 5;
  v.message = "[Loopguard] Swarm-wide dead end: `search` was called 10 times.";
  v.t = 1712.5;
  return v;
}

protocol::verdict structural(severity level) {
  protocol::verdict v = pushed(level);
  v.kind = "structural";
  v.fingerprint = search_fp().structural;
  return v;
}

std::uint64_t counted(const ExecutionEconomicsManager& m, severity s) {
  return m.stats()
      .detections[static_cast<std::size_t>(detector_id::global)][static_cast<std::size_t>(s)];
}

// An event no local rule says anything about: a read of a file not read before.
verdict fresh(ExecutionEconomicsManager& m) {
  return m.on_tool_call_json("read", R"({"path":"f)" + std::to_string(m.events()) + R"("})");
}

std::size_t globals_in(const verdict& v) {
  std::size_t n = 0;
  for (const auto& d : v.detections) n += d.detector == detector_id::global ? 1 : 0;
  return n;
}

}  // namespace

TEST_SUITE("swarm verdicts") {
  TEST_CASE("a warning becomes a nudge on the next verdict, with the daemon's message verbatim") {
    ExecutionEconomicsManager m;
    step(m, "search", kSearch, true, "no results");
    m.on_swarm_verdict(pushed(severity::warn));
    const verdict v = m.on_text("Let me think.");
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
    CHECK(d.occurrence == 1);
    CHECK(d.suggestion.empty());
    CHECK(v.event_index == 2);  // the text that carried it
    CHECK(d.loop_start == 2);
    // Delivered once.
    CHECK(m.on_text("Something else entirely.").allowed());
  }

  TEST_CASE("any method delivers it: a result, a chunk, add_cost") {
    ExecutionEconomicsManager m;
    m.on_tool_call_json("read", R"({"path":"a"})", "1");
    m.on_swarm_verdict(pushed(severity::warn));
    CHECK(m.on_tool_result("read", true, "text", "1").action == action::nudge);
    m.on_swarm_verdict(structural(severity::warn));
    CHECK(m.on_text_chunk("Hm").action == action::nudge);
    m.on_swarm_verdict(pushed(severity::critical));
    const verdict v = m.add_cost(0.01);
    CHECK(v.action == action::nudge);  // no call is judged: a waiting verdict never rejects
    CHECK(v.event_index == 2);         // add_cost carries the last event's index
    CHECK(counted(m, severity::warn) == 2);
    CHECK(counted(m, severity::critical) == 1);
  }

  TEST_CASE("critical nudges where no call matches it, terminate terminates") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::critical));
    CHECK(m.on_text("Planning.").action == action::nudge);
    protocol::verdict stop = pushed(severity::terminate);
    stop.fingerprint = 42;
    m.on_swarm_verdict(stop);
    const verdict v = m.on_text("More planning.");
    CHECK(v.action == action::terminate);
    CHECK(v.level == severity::terminate);
    CHECK(m.stats().terminated == 1);
    CHECK(m.stats().rejected == 0);
    CHECK(counted(m, severity::critical) == 1);
    CHECK(counted(m, severity::terminate) == 1);
  }

  TEST_CASE("it is not an event: no rule runs and the index does not move") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::warn));
    CHECK(m.events() == 0);
    CHECK(m.stats().checks == 0);
    // Nor does it count towards the agent's own loops: the first call of a run is still new.
    const verdict v = m.on_tool_call_json("search", kSearch);
    CHECK(v.action == action::nudge);
    CHECK(globals_in(v) == v.detections.size());
    CHECK(m.events() == 1);
  }

  TEST_CASE("a critical exact verdict rejects a matching call, as local rules reject") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::critical));
    const verdict first = m.on_tool_call_json("search", kSearch, "1");
    CHECK(first.action == action::reject);
    CHECK(first.level == severity::critical);
    REQUIRE(globals_in(first) == 1);  // the waiting nudge is the rejection's detection
    CHECK(first.strongest().detector == detector_id::global);
    CHECK(first.strongest().message == pushed(severity::critical).message);
    CHECK(first.strongest().loop_start == 0);
    // Every later matching call too, from on_tool_call as well; other calls go on.
    CHECK(m.on_tool_call("search", {{"query", "auth"}}, "2").action == action::reject);
    CHECK(m.on_tool_call_json("search", R"({"query":"other"})", "3").allowed());
    CHECK(m.on_tool_call_json("read", R"({"path":"a"})", "4").allowed());
    CHECK(m.stats().rejected == 2);
    CHECK(counted(m, severity::critical) == 2);
  }

  TEST_CASE("a critical structural verdict rejects calls of the same structure") {
    ExecutionEconomicsManager m;
    const char* with_flag = R"({"query":"auth","limit_results":5})";
    REQUIRE(search_fp(with_flag).exact != search_fp().exact);
    REQUIRE(search_fp(with_flag).structural == search_fp().structural);
    m.on_swarm_verdict(structural(severity::critical));
    CHECK(m.on_tool_call_json("search", kSearch, "1").action == action::reject);
    CHECK(m.on_tool_call_json("search", with_flag, "2").action == action::reject);
    CHECK(m.on_tool_call_json("search", R"({"query":"other"})", "3").allowed());
  }

  TEST_CASE("a warning, or a verdict of another kind, rejects nothing") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::warn));
    CHECK(m.on_tool_call_json("search", kSearch, "1").action == action::nudge);  // delivered
    CHECK(m.on_tool_call_json("search", kSearch, "2").allowed());
    protocol::verdict other = pushed(severity::critical);
    other.kind = "semantic";
    m.on_swarm_verdict(other);
    CHECK(fresh(m).action == action::nudge);  // delivered
    const verdict third = m.on_tool_call_json("search", kSearch, "3");
    CHECK(third.action != action::reject);
    CHECK(globals_in(third) == 0);  // the local exact rule's warning only
  }

  TEST_CASE("without reject_at_critical a matching call is nudged each time instead") {
    loopguard::manager_config c;
    c.escalation.reject_at_critical = false;
    ExecutionEconomicsManager m(c);
    m.on_swarm_verdict(pushed(severity::critical));
    for (const char* id : {"1", "2"}) {
      const verdict v = m.on_tool_call_json("search", kSearch, id);
      CHECK(v.action == action::nudge);
      CHECK(v.strongest().detector == detector_id::global);
    }
    CHECK(m.stats().rejected == 0);
  }

  TEST_CASE("level none lifts a verdict: no more rejections, and the fingerprint may come back") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::critical));
    CHECK(m.on_tool_call_json("search", kSearch, "1").action == action::reject);
    m.on_swarm_verdict(pushed(severity::none));
    const verdict lifted = m.on_tool_call_json("search", kSearch, "2");
    CHECK(lifted.allowed());  // the lift itself is not a detection
    CHECK(m.on_tool_result("search", true, "found", "2").allowed());
    m.on_swarm_verdict(pushed(severity::critical));  // declared again
    CHECK(m.on_tool_call_json("search", kSearch, "3").action == action::reject);
  }

  TEST_CASE("a nudge lifted before it was delivered is dropped") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::warn));
    m.on_swarm_verdict(structural(severity::warn));
    m.on_swarm_verdict(pushed(severity::none));
    const verdict v = m.on_text("Planning.");
    REQUIRE(v.detections.size() == 1);  // only the structural one
    CHECK(v.strongest().detector == detector_id::global);
    CHECK(counted(m, severity::warn) == 1);
  }

  TEST_CASE("a verdict already active at its level is not delivered again (a reconnect)") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::warn));
    CHECK(fresh(m).action == action::nudge);
    m.on_swarm_verdict(pushed(severity::warn));
    CHECK(fresh(m).allowed());
    // Warn then critical before either is delivered: one detection, the newer.
    m.on_swarm_verdict(structural(severity::warn));
    m.on_swarm_verdict(structural(severity::critical));
    const verdict v = fresh(m);
    REQUIRE(v.detections.size() == 1);
    CHECK(v.strongest().level == severity::critical);
  }

  TEST_CASE("global detections merge with local ones, strongest first") {
    ExecutionEconomicsManager m;
    for (const char* id : {"1", "2"}) {
      m.on_tool_call_json("bash", R"({"command":"ls"})", id);
      m.on_tool_result("bash", true, "", id);
    }
    m.on_swarm_verdict(pushed(severity::warn));
    // The third ls is a local exact warning; the waiting nudge comes after it (equal level).
    const verdict v = m.on_tool_call_json("bash", R"({"command":"ls"})", "3");
    CHECK(v.action == action::nudge);
    REQUIRE(v.detections.size() == 2);
    CHECK(v.detections[0].detector == detector_id::exact);
    CHECK(v.detections[1].detector == detector_id::global);
    m.on_tool_result("bash", true, "", "3");
    // A critical match goes first and rejects, over the local warning.
    protocol::verdict ls = pushed(severity::critical);
    ls.fingerprint = fingerprinter().of_call_text("bash", R"({"command":"ls"})").exact;
    m.on_swarm_verdict(ls);
    const verdict r = m.on_tool_call_json("bash", R"({"command":"ls"})", "4");
    CHECK(r.action == action::reject);
    REQUIRE(r.detections.size() >= 2);
    CHECK(r.detections[0].detector == detector_id::global);
    CHECK(fired(r, detector_id::exact));
  }

  TEST_CASE("reset forgets the run but keeps the swarm's verdicts") {
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(pushed(severity::critical));
    CHECK(m.on_tool_call_json("search", kSearch, "1").action == action::reject);
    m.on_swarm_verdict(structural(severity::warn));
    m.reset();
    CHECK(m.events() == 0);
    const verdict v = m.on_tool_call_json("search", kSearch, "1");
    CHECK(v.action == action::reject);
    CHECK(globals_in(v) == 2);  // the rejection and the structural nudge waiting since before
  }

  TEST_CASE("the override sees it like any verdict") {
    ExecutionEconomicsManager m;
    m.set_override([](verdict v) {
      if (!v.detections.empty() && v.strongest().detector == detector_id::global) {
        v.action = action::allow;
      }
      return v;
    });
    protocol::verdict stop = pushed(severity::terminate);
    stop.fingerprint = 42;
    m.on_swarm_verdict(stop);
    CHECK(m.on_text("go on").action == action::allow);
    CHECK(m.stats().terminated == 0);
    CHECK(counted(m, severity::terminate) == 1);  // counted before the override
    // A rejection the override lifts lets the call run (a result may pair with it).
    m.on_swarm_verdict(structural(severity::critical));
    CHECK(m.on_tool_call_json("search", kSearch, "1").allowed());
    CHECK(m.stats().rejected == 0);
  }

  TEST_CASE("tool and message are repaired to valid UTF-8, the verdict serializes as JSON") {
    ExecutionEconomicsManager m;
    protocol::verdict p = pushed(severity::warn);
    p.tool =
        "se\xff"
        "arch";
    p.message = "stuck on \xc3";
    m.on_swarm_verdict(p);
    const verdict v = m.on_text("x");
    REQUIRE(v.detections.size() == 1);
    CHECK(v.strongest().tool ==
          "se\xef\xbf\xbd"
          "arch");
    CHECK(v.strongest().message == "stuck on \xef\xbf\xbd");
    nlohmann::json j = {{"tool", v.strongest().tool}, {"message", v.strongest().message}};
    CHECK(loopguard::utf8::is_valid(j.dump()));  // dump() throws on invalid UTF-8
  }

  TEST_CASE("a verdict frame from the wire passes through unchanged") {
    const std::string frame =
        R"({"type":"verdict","swarm":"s","tool":"grep","kind":"structural","fingerprint":")" +
        loopguard::to_hex(fingerprinter().of_call_text("grep", R"({"pattern":"x"})").structural) +
        R"(","level":"critical","calls":12,"workers":3,)"
        R"("message":"[Loopguard CRITICAL] Swarm-wide dead end: stop.","t":3.5})";
    const auto parsed = protocol::parse(frame);
    REQUIRE(parsed.has_value());
    const protocol::message& msg = *parsed;
    REQUIRE(std::holds_alternative<protocol::verdict>(msg));
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(std::get<protocol::verdict>(msg));
    const verdict v = m.on_tool_call_json("grep", R"({"pattern":"x"})");
    CHECK(v.action == action::reject);
    CHECK(v.strongest().level == severity::critical);
    CHECK(v.strongest().message == "[Loopguard CRITICAL] Swarm-wide dead end: stop.");
    CHECK(v.strongest().count == 12);
    CHECK(v.strongest().tool == "grep");
  }
}

TEST_SUITE("swarm verdicts") {
  TEST_CASE("swarm_complete lifts every verdict and drops undelivered nudges") {
    ExecutionEconomicsManager m;
    protocol::verdict critical = pushed(severity::critical);
    m.on_swarm_verdict(critical);
    protocol::verdict other = pushed(severity::warn);
    other.fingerprint = 0x1111;
    m.on_swarm_verdict(other);
    m.on_swarm_complete();
    const verdict v = m.on_text("a thought");
    CHECK(v.allowed());
    CHECK(counted(m, severity::warn) == 0);
    CHECK(counted(m, severity::critical) == 0);
  }

  TEST_CASE("the swarm's budget: warn is a nudge, critical refuses every call, terminate ends") {
    protocol::verdict budget;
    budget.swarm = "refactor-auth";
    budget.kind = "budget";
    budget.level = severity::warn;
    budget.workers = 3;
    budget.spent = {0, 8};
    budget.unit = "USD";
    budget.message = "[Loopguard] Swarm budget: this swarm has used 80% of its budget.";
    ExecutionEconomicsManager m;
    m.on_swarm_verdict(budget);
    const verdict warned = m.on_tool_call_json("read_file", R"({"path":"a"})", "1");
    CHECK(warned.action == action::nudge);
    REQUIRE(warned.detections.size() == 1);
    CHECK(warned.strongest().detector == detector_id::budget);
    CHECK(warned.strongest().message == budget.message);
    m.on_tool_result("read_file", true, "a", "1");

    budget.level = severity::critical;
    budget.message = "[Loopguard CRITICAL] Swarm budget spent.";
    m.on_swarm_verdict(budget);
    for (const char* args : {R"({"path":"b"})", R"({"path":"c"})"}) {  // any call at all
      const verdict v = m.on_tool_call_json("read_file", args);
      CHECK(v.action == action::reject);
      CHECK(v.strongest().detector == detector_id::budget);
      CHECK(v.strongest().message == budget.message);
    }
    m.on_swarm_complete();  // a completed swarm's budget is gone with it
    CHECK(m.on_tool_call_json("read_file", R"({"path":"d"})").action != action::reject);

    budget.level = severity::terminate;
    m.on_swarm_verdict(budget);
    CHECK(m.on_text("Thinking about it.").action == action::terminate);
  }
}
