// The judge hook: when it is asked, what it is shown, and what its answers become.
#include <stdexcept>
#include <string>
#include <vector>

#include "loopguard/utf8.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::detector_id;
using loopguard::judge_answer;
using loopguard::judge_digest;
using loopguard::severity;

namespace {

// A scripted judge: records every digest, answers from a script (the last answer repeats).
struct scripted {
  std::vector<judge_digest> asked;
  std::vector<std::optional<judge_answer>> script{judge_answer{0.1, "fine", 0.5}};

  loopguard::judge_fn fn() {
    return [this](const judge_digest& d) -> std::optional<judge_answer> {
      asked.push_back(d);
      return script[std::min(asked.size() - 1, script.size() - 1)];
    };
  }
};

// One model turn without any rule firing: a new file read.
void turn(ExecutionEconomicsManager& m) {
  const std::string path = "f" + std::to_string(m.events());
  step(m, "read_file", R"({"path":")" + path + "\"}", true, "contents of " + path);
}

loopguard::manager_config cadence(std::uint64_t after, std::uint32_t every) {
  loopguard::manager_config c;
  c.judge.after_turn = after;
  c.judge.every_turns = every;
  return c;
}

}  // namespace

TEST_SUITE("judge") {
  TEST_CASE("without a judge nothing is asked, with one, every N turns after turn M") {
    ExecutionEconomicsManager none(cadence(2, 3));
    for (int i = 0; i < 10; ++i) turn(none);
    CHECK(none.stats().judge_checks == 0);

    scripted j;
    ExecutionEconomicsManager m(cadence(2, 3));
    m.set_judge(j.fn());
    for (int i = 0; i < 10; ++i) turn(m);
    // Turns 2, 5 and 8 (counted from 1), each once, on the turn's call.
    REQUIRE(j.asked.size() == 3);
    CHECK(j.asked[0].turn == 2);
    CHECK(j.asked[1].turn == 5);
    CHECK(j.asked[2].turn == 8);
    CHECK(j.asked[0].why == "cadence");
    CHECK(m.stats().judge_checks == 3);
    CHECK(m.stats().judge_cost == doctest::Approx(1.5));
  }

  TEST_CASE("a rule that fires asks at once, once per turn, off when on_warn is false") {
    scripted j;
    ExecutionEconomicsManager m(cadence(1000, 0));
    m.set_judge(j.fn());
    for (int i = 0; i < 3; ++i) step(m, "read_file", R"({"path":"a"})", true, "same");
    REQUIRE(j.asked.size() == 1);
    CHECK(j.asked[0].why == "warn");
    REQUIRE(j.asked[0].warning.size() == 1);
    CHECK(j.asked[0].warning[0] == "exact");

    auto c = cadence(1000, 0);
    c.judge.on_warn = false;
    scripted quiet;
    ExecutionEconomicsManager off(c);
    off.set_judge(quiet.fn());
    for (int i = 0; i < 3; ++i) step(off, "read_file", R"({"path":"a"})", true, "same");
    CHECK(quiet.asked.empty());
  }

  TEST_CASE("an answer at the threshold is a judge detection with its reason and cost") {
    scripted j;
    j.script = {judge_answer{0.95, "It keeps reading files instead of editing the parser", 0.0021}};
    ExecutionEconomicsManager m(cadence(1, 1));
    m.set_judge(j.fn());
    const auto v = m.on_tool_call_json("read_file", R"({"path":"x"})");
    REQUIRE(fired(v, detector_id::judge));
    const auto& d = get(v, detector_id::judge);
    CHECK(d.level == severity::warn);
    CHECK(d.confidence == doctest::Approx(0.95));
    CHECK(d.message.find("instead of editing the parser") != std::string::npos);
    CHECK(d.message.find("check cost 0.0021") != std::string::npos);
    CHECK(d.message.starts_with("[Loopguard] "));
    // The next turn's answer, still above: critical; a low one ends the episode.
    m.on_tool_result("read_file", true, "x");
    const auto w = m.on_tool_call_json("read_file", R"({"path":"y"})");
    CHECK(get(w, detector_id::judge).level == severity::critical);
    j.script.push_back(judge_answer{0.2, "", 0});
    m.on_tool_result("read_file", true, "y");
    CHECK_FALSE(fired(m.on_tool_call_json("read_file", R"({"path":"z"})"), detector_id::judge));
  }

  TEST_CASE("the digest is bounded in events and bytes, and valid UTF-8") {
    scripted j;
    auto c = cadence(1000, 0);
    c.judge.max_events = 5;
    c.judge.max_bytes = 1000;
    c.judge.event_bytes = 100;
    ExecutionEconomicsManager m(c);
    m.set_judge(j.fn());
    for (int i = 0; i < 30; ++i) {
      m.on_tool_call_json("bash", R"({"command":"cat big)" + std::to_string(i) + "\"}");
      m.on_tool_result("bash", true,
                       std::string(5000, 'x') + "\xe2\x82\xac\xff" + std::string(90, 'y'));
    }
    for (int i = 0; i < 3; ++i)
      step(m, "read_file", R"({"path":"a"})", true, "\xc3\xa9t\xc3\xa9 \xc3\xa9");
    REQUIRE(!j.asked.empty());
    for (const auto& d : j.asked) {
      CHECK(d.events.size() <= 5);
      std::size_t bytes = 0;
      for (const auto& e : d.events) {
        CHECK(e.text.size() <= 100);
        CHECK(loopguard::utf8::is_valid(e.text));
        bytes += e.text.size() + e.tool.size();
      }
      CHECK(bytes <= 1000);
    }
    const auto& last = j.asked.back().events.back();
    CHECK(last.kind == "tool_call");
    CHECK(last.tool == "read_file");
  }

  TEST_CASE("a judge that throws or answers nonsense is counted, not believed") {
    auto c = cadence(1, 1);
    ExecutionEconomicsManager m(c);
    int calls = 0;
    m.set_judge([&](const judge_digest&) -> std::optional<judge_answer> {
      ++calls;
      if (calls == 1) throw std::runtime_error("model timeout");
      if (calls == 2) return judge_answer{1.5, "sure", 1};
      if (calls == 3) return judge_answer{std::nan(""), "?", 1};
      return judge_answer{0.99, "stuck \xff", -4};
    });
    for (int i = 0; i < 3; ++i) {  // one question per turn: a result ends each turn
      CHECK_FALSE(fired(m.on_tool_call_json("t", R"({"i":)" + std::to_string(i) + "}"),
                        detector_id::judge));
      m.on_tool_result("t", true, "r" + std::to_string(i));
    }
    const auto v = m.on_tool_call_json("t", R"({"i":9})");
    REQUIRE(fired(v, detector_id::judge));
    CHECK(loopguard::utf8::is_valid(get(v, detector_id::judge).message));
    CHECK(m.stats().judge_checks == 4);
    CHECK(m.stats().judge_errors == 3);
    CHECK(m.stats().judge_cost == 0);  // a negative cost is not a cost
  }

  TEST_CASE("a user message is shown to the judge, settings are validated") {
    scripted j;
    ExecutionEconomicsManager m(cadence(0, 1));
    m.set_judge(j.fn());
    m.on_user_message("Please stop and summarise.");
    REQUIRE(j.asked.size() == 1);
    CHECK(j.asked[0].events.back().kind == "user");
    CHECK(j.asked[0].events.back().text == "Please stop and summarise.");
    const auto bad = loopguard::parse_config(
        nlohmann::json::parse(R"({"detectors":{"judge":{"threshold":2}}})"));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() == "detectors.judge.threshold: expected a number in 0..1, got 2");
  }
}
