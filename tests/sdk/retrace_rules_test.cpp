// retrace: results that show again what other calls showed, with no change since
// (docs/detectors.md, "[retrace]").
#include <string>

#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;

namespace retrace_rules {

// One window of a file, as an editor tool shows it: long enough to be remembered.
std::string page(int n) {
  std::string out = "[File: sklearn/mixture/base.py (536 lines total)]\n";
  for (int line = n * 100 + 1; line <= n * 100 + 10; ++line) {
    out += std::to_string(line) + ":    x_" + std::to_string(line) + " = compute(x)\n";
  }
  return out;
}

// A navigation call and the page it shows; returns the result's verdict.
verdict go(ExecutionEconomicsManager& m, const std::string& tool, const std::string& args, int n) {
  m.on_tool_call_json(tool, args);
  return m.on_tool_result(tool, true, page(n));
}

// Pages down from `open`, then back over them through other calls: three pages that another
// call showed first.
std::vector<verdict> page_back_and_forth(ExecutionEconomicsManager& m) {
  std::vector<verdict> out;
  out.push_back(go(m, "open", R"({"path":"base.py"})", 0));
  out.push_back(go(m, "scroll_down", "{}", 1));
  out.push_back(go(m, "scroll_down", "{}", 2));
  out.push_back(go(m, "scroll_up", "{}", 1));          // retraced 1: scroll_down showed it
  out.push_back(go(m, "goto", R"({"line":1})", 0));    // retraced 2: open showed it
  out.push_back(go(m, "goto", R"({"line":101})", 1));  // retraced 3
  return out;
}

// Two retraced results, the next `goto 1` being the third (open showed page 0 first).
void retrace_twice(ExecutionEconomicsManager& m) {
  go(m, "open", R"({"path":"base.py"})", 0);
  go(m, "scroll_down", "{}", 1);
  go(m, "scroll_up", "{}", 0);          // retraced 1: open showed it
  go(m, "goto", R"({"line":101})", 1);  // retraced 2: scroll_down showed it
}

}  // namespace retrace_rules

using namespace retrace_rules;

TEST_SUITE("retrace") {
  TEST_CASE("the third result already seen through another call warns") {
    ExecutionEconomicsManager m;
    const std::vector<verdict> vs = page_back_and_forth(m);
    for (std::size_t i = 0; i + 1 < vs.size(); ++i) CHECK_FALSE(fired(vs[i], detector_id::retrace));
    REQUIRE(fired(vs.back(), detector_id::retrace));
    const auto& d = get(vs.back(), detector_id::retrace);
    CHECK(d.count == 3);
    CHECK(d.level == severity::warn);
    CHECK(vs.back().action == action::nudge);  // judged on a result: never a rejection
    // Two more are critical.
    go(m, "goto", R"({"line":201})", 2);
    const verdict fifth = go(m, "goto", R"({"line":2})", 0);
    REQUIRE(fired(fifth, detector_id::retrace));
    CHECK(get(fifth, detector_id::retrace).level == severity::critical);
  }

  TEST_CASE("a successful change in between forgets what was seen") {
    ExecutionEconomicsManager unchanged;
    retrace_twice(unchanged);
    CHECK(fired(go(unchanged, "goto", R"({"line":1})", 0), detector_id::retrace));
    ExecutionEconomicsManager m;
    retrace_twice(m);
    step(m, "edit", R"({"path":"base.py","start":3,"end":4,"text":"y = 1"})", true,
         "File updated.");
    CHECK_FALSE(fired(go(m, "goto", R"({"line":1})", 0), detector_id::retrace));
  }

  TEST_CASE("a call's own results, errors and short outputs are not counted") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 4; ++i) {
      CHECK_FALSE(fired(go(m, "open", R"({"path":"base.py"})", 0), detector_id::retrace));
    }
    // Paging down and up with the same two calls: each page's first caller shows it again.
    ExecutionEconomicsManager paging;
    for (int i = 0; i < 3; ++i) {
      CHECK_FALSE(fired(go(paging, "scroll_down", "{}", 1), detector_id::retrace));
      CHECK_FALSE(fired(go(paging, "scroll_up", "{}", 0), detector_id::retrace));
    }
    ExecutionEconomicsManager errors;
    for (const char* f : {"a", "b", "c", "d"}) {
      errors.on_tool_call_json("read_file", std::string(R"({"path":")") + f + "\"}");
      CHECK_FALSE(fired(errors.on_tool_result("read_file", false, page(0)), detector_id::retrace));
    }
    // Short outputs: at min_bytes a page counts, one byte short it is not looked at.
    const std::size_t bytes = page(0).size();
    for (const std::size_t min_bytes : {bytes, bytes + 1}) {
      CAPTURE(min_bytes);
      auto c = preset("balanced");
      c.retrace.min_bytes = static_cast<std::uint32_t>(min_bytes);
      ExecutionEconomicsManager short_outputs(c);
      CHECK(fired(page_back_and_forth(short_outputs).back(), detector_id::retrace) ==
            (min_bytes == bytes));
    }
    // Another call repeating a result: counted once, then its own repeats are exact's.
    ExecutionEconomicsManager repeats;
    go(repeats, "open", R"({"path":"base.py"})", 0);
    for (int i = 0; i < 4; ++i) {
      CHECK_FALSE(fired(go(repeats, "goto", R"({"line":1})", 0), detector_id::retrace));
    }
  }

  TEST_CASE("a failed change is no change, a resume restarts the count") {
    ExecutionEconomicsManager m;
    retrace_twice(m);
    step(m, "edit", R"({"path":"base.py","text":"y = 1"})", false, "Error: syntax error");
    CHECK(fired(go(m, "goto", R"({"line":1})", 0), detector_id::retrace));
    ExecutionEconomicsManager resumed;
    retrace_twice(resumed);
    resumed.on_resume();
    CHECK_FALSE(fired(go(resumed, "goto", R"({"line":1})", 0), detector_id::retrace));
  }

  TEST_CASE("the window: retraced results far apart do not add up") {
    ExecutionEconomicsManager m;
    go(m, "open", R"({"path":"base.py"})", 0);
    int next_page = 1;
    const auto new_pages = [&](int n) {
      for (int i = 0; i < n; ++i)
        go(m, "search", R"({"q":")" + std::to_string(next_page) + "\"}", next_page++);
    };
    for (int line : {1, 2, 3, 4}) {
      new_pages(9);  // nine new results between retraced ones: never 3 in the last 10
      CHECK_FALSE(fired(go(m, "goto", R"({"line":)" + std::to_string(line) + "}", 0),
                        detector_id::retrace));
    }
  }

  TEST_CASE("the calls of one turn, and a polling tool, are not retraced") {
    ExecutionEconomicsManager m;
    go(m, "open", R"({"path":"base.py"})", 0);
    for (int turn = 0; turn < 3; ++turn) {
      // Two calls of one turn showing the same new page: the second is no going back.
      const std::string a = "a" + std::to_string(turn);
      const std::string b = "b" + std::to_string(turn);
      m.on_tool_call_json("read_file", R"({"path":"x)" + std::to_string(turn) + ".py\"}", a);
      m.on_tool_call_json("read_file", R"({"path":"./x)" + std::to_string(turn) + ".py\"}", b);
      CHECK_FALSE(
          fired(m.on_tool_result("read_file", true, page(10 + turn), a), detector_id::retrace));
      CHECK_FALSE(
          fired(m.on_tool_result("read_file", true, page(10 + turn), b), detector_id::retrace));
    }
    auto c = preset("balanced");
    c.tools["goto"].poll = true;
    c.tools["scroll_up"].enabled = false;
    ExecutionEconomicsManager polled(c);
    CHECK_FALSE(fired(page_back_and_forth(polled).back(), detector_id::retrace));
  }

  TEST_CASE("a user message restarts the count") {
    ExecutionEconomicsManager m;
    retrace_twice(m);
    m.on_user_message("Look at the fit method again, please.");
    CHECK_FALSE(fired(go(m, "goto", R"({"line":1})", 0), detector_id::retrace));
  }

  TEST_CASE("settings: off, min_bytes, the presets") {
    auto c = preset("balanced");
    c.retrace.enabled = false;
    ExecutionEconomicsManager off(c);
    CHECK_FALSE(fired(page_back_and_forth(off).back(), detector_id::retrace));
    c = preset("balanced");
    c.retrace.min_bytes = 100000;
    ExecutionEconomicsManager large(c);
    CHECK_FALSE(fired(page_back_and_forth(large).back(), detector_id::retrace));
    ExecutionEconomicsManager aggressive(preset("aggressive"));
    const std::vector<verdict> vs = page_back_and_forth(aggressive);
    CHECK(fired(vs[vs.size() - 2], detector_id::retrace));  // at 2
    ExecutionEconomicsManager cline(preset("cline"));
    CHECK_FALSE(fired(page_back_and_forth(cline).back(), detector_id::retrace));
  }
}
