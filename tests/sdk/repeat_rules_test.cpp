// Rules 1, 2 and 5: exact and structural repeats, judged with the outcomes of earlier calls.
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;

TEST_SUITE("exact") {
  TEST_CASE("the third identical call with the same outcome warns, the sixth is rejected") {
    ExecutionEconomicsManager m;
    CHECK(step(m, "bash", R"({"command":"ls"})", true, "").allowed());
    CHECK(step(m, "bash", R"({"command":"ls"})", true, "").allowed());
    const verdict third = step(m, "bash", R"({"command":"ls"})", true, "");
    REQUIRE(fired(third, detector_id::exact));
    CHECK(third.action == action::nudge);
    CHECK(third.level == severity::warn);
    CHECK(get(third, detector_id::exact).count == 3);
    CHECK(get(third, detector_id::exact).loop_start == 0);
    CHECK(get(third, detector_id::exact).confidence == doctest::Approx(1.0));
    CHECK(third.strongest().message.find("`bash`") != std::string::npos);
    CHECK(third.strongest().message.find("3 times") != std::string::npos);
    step(m, "bash", R"({"command":"ls"})", true, "");
    step(m, "bash", R"({"command":"ls"})", true, "");
    const verdict sixth = step(m, "bash", R"({"command":"ls"})", true, "");
    CHECK(sixth.level == severity::critical);
    CHECK(sixth.action == action::reject);
    CHECK(get(sixth, detector_id::exact).count == 6);
  }

  TEST_CASE("key order and whitespace do not hide a repeat") {
    ExecutionEconomicsManager m;
    step(m, "search", R"({"query":"x","limit":5})", true, "none");
    step(m, "search", R"({ "limit": 5, "query": "x" })", true, "none");
    CHECK(
        fired(step(m, "search", R"({"limit":5.0,"query":"x"})", true, "none"), detector_id::exact));
  }

  TEST_CASE("polling with changing output is progress, bounded only by the cap") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 29; ++i) {
      const verdict v = step(m, "job_status", R"({"id":"j1"})", true,
                             "running, " + std::to_string(i) + " of 100 done");
      CAPTURE(i);
      CHECK(v.allowed());
    }
    const verdict capped = step(m, "job_status", R"({"id":"j1"})", true, "running, 29 done");
    REQUIRE(fired(capped, detector_id::exact));
    CHECK(get(capped, detector_id::exact).count == 30);
    CHECK(capped.level == severity::warn);
  }

  TEST_CASE("a successful new change between two runs of the same call resets the count") {
    ExecutionEconomicsManager m;
    for (int round = 0; round < 3; ++round) {
      step(m, "edit_file", R"({"path":"a.cc","new":")" + std::to_string(round) + R"("})", true,
           "ok");
      CHECK(step(m, "bash", R"({"command":"ctest"})", false, "1 test failed").allowed() == true);
    }
  }

  TEST_CASE("repeating the same edit is not progress") {
    ExecutionEconomicsManager m;
    step(m, "edit_file", R"({"path":"a.cc","new":"x"})", true, "ok");
    step(m, "edit_file", R"({"path":"a.cc","new":"x"})", true, "ok");
    CHECK(fired(step(m, "edit_file", R"({"path":"a.cc","new":"x"})", true, "ok"),
                detector_id::exact));
  }

  TEST_CASE("calls whose results never arrive still count, with lower confidence") {
    ExecutionEconomicsManager m;
    m.on_tool_call_json("fetch", R"({"url":"u"})");
    m.on_tool_call_json("fetch", R"({"url":"u"})");
    const verdict v = m.on_tool_call_json("fetch", R"({"url":"u"})");
    REQUIRE(fired(v, detector_id::exact));
    CHECK(get(v, detector_id::exact).confidence < 1.0);
  }

  TEST_CASE("within the window, not only consecutively") {
    ExecutionEconomicsManager m;
    step(m, "read_file", R"({"path":"a"})", true, "A");
    step(m, "grep", R"({"pattern":"x"})", true, "no matches");
    step(m, "read_file", R"({"path":"a"})", true, "A");
    step(m, "grep", R"({"pattern":"y"})", true, "no matches");
    CHECK(fired(step(m, "read_file", R"({"path":"a"})", true, "A"), detector_id::exact));
  }

  TEST_CASE("a re-read between searches that found something is not a loop") {
    ExecutionEconomicsManager m;
    step(m, "view", R"({"path":"a.py"})", true, "def f(): ...");
    step(m, "grep", R"({"pattern":"f("})", true, "a.py:12: f(1)");
    step(m, "view", R"({"path":"a.py"})", true, "def f(): ...");
    step(m, "grep", R"({"pattern":"g("})", true, "a.py:40: g(2)");
    CHECK(step(m, "view", R"({"path":"a.py"})", true, "def f(): ...").allowed());
    // The same search again brings nothing new: now the re-reads count.
    step(m, "grep", R"({"pattern":"g("})", true, "a.py:40: g(2)");
    step(m, "view", R"({"path":"a.py"})", true, "def f(): ...");
    step(m, "grep", R"({"pattern":"g("})", true, "a.py:40: g(2)");
    CHECK(fired(step(m, "view", R"({"path":"a.py"})", true, "def f(): ..."), detector_id::exact));
  }

  TEST_CASE("identical failing calls count across other failing attempts on the same target") {
    // The same malformed edit (no old_str) four times, with other failing edits of the same
    // file between: more calls than the window, but one struggle.
    ExecutionEconomicsManager m;
    const std::string bad = R"({"command":"str_replace","path":"a.py","new_str":"x = 2"})";
    const char* olds[] = {"def parse(self, text):",
                          "    return self._cache[key]",
                          "class Loader(object):",
                          "import os, sys",
                          "    if not items: raise ValueError",
                          "for k, v in d.items():",
                          "@property",
                          "    self.count += 1",
                          "return None"};
    verdict v;
    int n = 0;
    for (int i = 0; i < 4; ++i) {
      v = step(m, "str_replace_editor", bad, false, "Parameter `old_str` is required");
      if (i == 3) break;
      for (int j = 0; j < 3; ++j, ++n) {
        const std::string other = R"({"command":"str_replace","path":"a.py","old_str":")" +
                                  std::string(olds[n]) + R"(","new_str":"x = 2"})";
        step(m, "str_replace_editor", other, false,
             "No replacement was performed, `" + std::string(olds[n]) +
                 "` did not appear verbatim in a.py.");
      }
    }
    REQUIRE(fired(v, detector_id::exact));
    CHECK(get(v, detector_id::exact).count == 4);
    CHECK(get(v, detector_id::exact).loop_start == 0);
  }

  TEST_CASE("viewing a file with an editor tool is not a change") {
    // str_replace_editor's name says it edits; its `view` sub-command does not, so a view of a
    // new file between two identical failing edits does not break their count.
    ExecutionEconomicsManager m;
    const std::string bad = R"({"command":"str_replace","path":"a.py","new_str":"x"})";
    step(m, "str_replace_editor", bad, false, "Parameter `old_str` is required");
    step(m, "str_replace_editor", R"({"command":"view","path":"b.py"})", true, "");
    step(m, "str_replace_editor", bad, false, "Parameter `old_str` is required");
    step(m, "str_replace_editor", R"({"command":"view","path":"c.py"})", true, "");
    CHECK(fired(step(m, "str_replace_editor", bad, false, "Parameter `old_str` is required"),
                detector_id::exact));
  }

  TEST_CASE("reading several files in a row is not a loop") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 10; ++i) {
      CHECK(step(m, "read_file", R"({"path":"src/f)" + std::to_string(i) + R"(.cc"})", true,
                 "contents " + std::to_string(i))
                .allowed());
    }
  }

  TEST_CASE("a malformed argument string still counts as a repeat") {
    ExecutionEconomicsManager m;
    m.on_tool_call_json("t", "{oops");
    m.on_tool_call_json("t", "{oops");
    CHECK(fired(m.on_tool_call_json("t", "{oops"), detector_id::exact));
  }
}

TEST_SUITE("structural") {
  TEST_CASE("reading one file through different shell commands is one loop") {
    ExecutionEconomicsManager m;
    const char* cmds[] = {"cat foo.ts", "head foo.ts", "tail foo.ts"};
    for (const char* c : cmds) {
      CHECK(step(m, "bash", std::string(R"({"command":")") + c + R"("})", true, "x").allowed());
    }
    const verdict v = step(m, "bash", R"({"command":"head -n 50 foo.ts"})", true, "x");
    REQUIRE(fired(v, detector_id::structural));
    CHECK(get(v, detector_id::structural).count == 4);
    CHECK(v.strongest().message.find("bash:file_read:foo.ts") != std::string::npos);
  }

  TEST_CASE("optional flags do not hide a repeat") {
    ExecutionEconomicsManager m;
    step(m, "read_file", R"({"path":"a","encoding":"utf8"})", true, "A");
    step(m, "read_file", R"({"path":"a","encoding":"latin1"})", true, "A");
    step(m, "read_file", R"({"path":"a","lines":10})", true, "A");
    CHECK(fired(step(m, "read_file", R"({"path":"a","lines":20})", true, "A"),
                detector_id::structural));
  }

  TEST_CASE("different edits of the same file are progress") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 8; ++i) {
      const verdict v = step(m, "edit_file",
                             R"({"path":"a.cc","old":"v)" + std::to_string(i) + R"(","new":"v)" +
                                 std::to_string(i + 1) + R"("})",
                             true, "ok");
      CAPTURE(i);
      CHECK(v.allowed());
    }
  }

  TEST_CASE("not reported when the exact rule already fired") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 4; ++i) step(m, "read_file", R"({"path":"a"})", true, "A");
    const verdict v = step(m, "read_file", R"({"path":"a"})", true, "A");
    CHECK(fired(v, detector_id::exact));
    CHECK_FALSE(fired(v, detector_id::structural));
  }
}
