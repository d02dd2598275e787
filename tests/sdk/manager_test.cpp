// The manager's contract: escalation ladders, verdict actions, override, reset, stats.
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;

namespace {
// Three identical `ls` calls (a detection), then a successful new edit (the agent left).
verdict loop_then_leave(ExecutionEconomicsManager& m, int round) {
  step(m, "bash", R"({"command":"ls"})", true, "");
  step(m, "bash", R"({"command":"ls"})", true, "");
  const verdict v = step(m, "bash", R"({"command":"ls"})", true, "");
  step(m, "write_file", R"({"path":"f)" + std::to_string(round) + R"("})", true, "ok");
  return v;
}
}  // namespace

TEST_SUITE("escalation") {
  TEST_CASE("the third time the agent falls back into the same loop terminates") {
    ExecutionEconomicsManager m;
    const verdict first = loop_then_leave(m, 1);
    CHECK(first.action == action::nudge);
    CHECK(get(first, detector_id::exact).occurrence == 1);
    const verdict second = loop_then_leave(m, 2);
    CHECK(second.action == action::nudge);
    CHECK(get(second, detector_id::exact).occurrence == 2);
    CHECK(second.strongest().message.find("2nd time") != std::string::npos);
    const verdict third = loop_then_leave(m, 3);
    CHECK(third.action == action::terminate);
    CHECK(third.level == severity::terminate);
    CHECK(m.stats().terminated == 1);
  }

  TEST_CASE("within one episode only the count ladder moves") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 5; ++i) {
      const verdict v = step(m, "bash", R"({"command":"ls"})", true, "");
      if (i >= 2) {
        CHECK(v.action == action::nudge);
        CHECK(get(v, detector_id::exact).occurrence == 1);
      }
    }
  }

  TEST_CASE("a rejected call is reported in stats") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 6; ++i) step(m, "bash", R"({"command":"ls"})", true, "");
    CHECK(m.stats().rejected == 1);
    CHECK(m.stats().detections[static_cast<std::size_t>(detector_id::exact)]
                              [static_cast<std::size_t>(severity::warn)] == 3);
    CHECK(m.stats().detections[static_cast<std::size_t>(detector_id::exact)]
                              [static_cast<std::size_t>(severity::critical)] == 1);
    CHECK(m.stats().tool_calls == 6);
    CHECK(m.stats().tool_results == 6);
    CHECK(m.stats().checks == 12);
  }

  TEST_CASE("terminate_after = 0 never terminates") {
    auto c = preset("balanced");
    c.escalation.terminate_after = 0;
    ExecutionEconomicsManager m(c);
    for (int r = 0; r < 5; ++r) CHECK(loop_then_leave(m, r).action == action::nudge);
  }

  TEST_CASE("per-tool overrides: a polling tool may repeat more, a write tool less") {
    auto c = preset("balanced");
    c.tools["poll"].exact = loopguard::ladder{8, 12};
    c.tools["deploy"].exact = loopguard::ladder{2, 3};
    c.tools["noisy"].enabled = false;
    ExecutionEconomicsManager m(c);
    for (int i = 0; i < 7; ++i) CHECK(step(m, "poll", "{}", true, "same").allowed());
    CHECK(fired(step(m, "poll", "{}", true, "same"), detector_id::exact));
    step(m, "deploy", "{}", true, "ok");
    CHECK(fired(step(m, "deploy", "{}", true, "ok"), detector_id::exact));
    for (int i = 0; i < 10; ++i)
      CHECK_FALSE(fired(step(m, "noisy", "{}", true, "x"), detector_id::exact));
  }

  TEST_CASE("switching a detector off") {
    auto c = preset("balanced");
    c.exact.enabled = false;
    c.structural.enabled = false;
    c.cycle.enabled = false;
    ExecutionEconomicsManager m(c);
    for (int i = 0; i < 10; ++i) CHECK(step(m, "bash", R"({"command":"ls"})", true, "").allowed());
  }
}

TEST_SUITE("manager") {
  TEST_CASE("the override callback may replace any verdict") {
    ExecutionEconomicsManager m;
    int seen = 0;
    m.set_override([&](verdict v) {
      ++seen;
      if (v.action == action::nudge) v.action = action::allow;
      return v;
    });
    for (int i = 0; i < 3; ++i) CHECK(step(m, "bash", R"({"command":"ls"})", true, "").allowed());
    CHECK(seen == 6);
  }

  TEST_CASE("reset forgets the run but keeps the settings") {
    auto c = preset("balanced");
    c.exact.steps = {2, 4};
    ExecutionEconomicsManager m(c);
    step(m, "bash", R"({"command":"ls"})", true, "");
    m.reset();
    CHECK(m.stats().checks == 0);
    CHECK(m.events() == 0);
    CHECK(step(m, "bash", R"({"command":"ls"})", true, "").allowed());
    CHECK(fired(step(m, "bash", R"({"command":"ls"})", true, ""), detector_id::exact));
  }

  TEST_CASE("results pair with their calls by id, out of order") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 2; ++i) {
      m.on_tool_call_json("search", R"({"query":"a"})", "c1");
      m.on_tool_call_json("search", R"({"query":"b"})", "c2");
      // b's first answer is empty (no new information between the two a's), its second is not.
      m.on_tool_result("search", true, i == 0 ? "" : "B1", "c2");
      m.on_tool_result("search", true, "A", "c1");
    }
    // `a` came back the same twice: a third call of it warns; `b` changed: it does not.
    CHECK(fired(m.on_tool_call_json("search", R"({"query":"a"})", "c5"), detector_id::exact));
    CHECK_FALSE(fired(m.on_tool_call_json("search", R"({"query":"b"})", "c6"), detector_id::exact));
  }

  TEST_CASE("the verdict's event index and loop start let a caller roll back") {
    ExecutionEconomicsManager m;
    m.on_text("let me look");
    step(m, "bash", R"({"command":"ls"})", true, "");
    step(m, "bash", R"({"command":"ls"})", true, "");
    const verdict v = m.on_tool_call_json("bash", R"({"command":"ls"})");
    CHECK(v.event_index == 5);
    CHECK(v.strongest().loop_start == 1);
  }

  TEST_CASE("a refused call never pairs with a later result (regression)") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 5; ++i) step(m, "bash", R"({"command":"ls"})", true, "");
    REQUIRE(m.on_tool_call_json("bash", R"({"command":"ls"})").action == action::reject);
    // The agent polls something else whose output changes: each result must pair with its
    // own call (so the changing output reads as progress), not with the refused call.
    m.on_tool_call_json("bash", R"({"command":"date"})");
    m.on_tool_result("bash", true, "Mon");
    m.on_tool_call_json("bash", R"({"command":"date"})");
    m.on_tool_result("bash", true, "Tue");
    CHECK_FALSE(fired(m.on_tool_call_json("bash", R"({"command":"date"})"), detector_id::exact));
  }

  TEST_CASE("moves keep the state") {
    ExecutionEconomicsManager a;
    step(a, "bash", R"({"command":"ls"})", true, "");
    step(a, "bash", R"({"command":"ls"})", true, "");
    ExecutionEconomicsManager b = std::move(a);
    CHECK(fired(step(b, "bash", R"({"command":"ls"})", true, ""), detector_id::exact));
  }

  TEST_CASE("after reset() a manager judges a run exactly as a new one does") {
    // A script that leaves something in every part of the run's state: history, episodes,
    // streaks, cost, the text stream and a character cut between chunks.
    const auto script = [](ExecutionEconomicsManager& m) {
      std::vector<std::string> out;
      const auto note = [&](const verdict& v) {
        std::string line =
            std::string(loopguard::to_string(v.action)) + ":" + std::to_string(v.event_index);
        for (const auto& d : v.detections) {
          line += " " + std::string(loopguard::to_string(d.detector)) + "/" +
                  std::to_string(d.count) + "/" + std::to_string(d.occurrence) + "/" + d.message;
        }
        out.push_back(line);
      };
      for (int i = 0; i < 5; ++i) {
        note(m.on_tool_call_json("bash", R"({"command":"pytest"})"));
        note(m.on_tool_result("bash", false, "1 failed"));
        note(m.on_tool_call_json(i % 2 ? "view" : "edit", R"({"path":"a.py"})"));
        note(m.on_tool_result(i % 2 ? "view" : "edit", true, "ok"));
        note(m.on_text("I will summarise what I did so far."));
        note(m.on_text_chunk("repeat repeat repeat repeat repeat \xE2\x94"));
        note(m.add_cost(0.4));
      }
      return out;
    };
    for (const char* name : {"balanced", "aggressive", "attocode", "ralph"}) {
      CAPTURE(name);
      ExecutionEconomicsManager fresh(preset(name)), reused(preset(name));
      script(reused);
      reused.reset();
      CHECK(script(reused) == script(fresh));
      CHECK(reused.stats().checks == fresh.stats().checks);
    }
  }
}

TEST_SUITE("verdict names") {
  TEST_CASE("every detector id parses back from its name, other names do not parse") {
    for (std::size_t i = 0; i < loopguard::kDetectorCount; ++i) {
      const auto id = static_cast<detector_id>(i);
      CAPTURE(loopguard::to_string(id));
      CHECK(loopguard::parse_detector(loopguard::to_string(id)) == id);
    }
    CHECK_FALSE(loopguard::parse_detector("Rule 6").has_value());
    CHECK_FALSE(loopguard::parse_detector("").has_value());
  }
}
