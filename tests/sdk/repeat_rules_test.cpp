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
    step(m, "grep", R"({"pattern":"x"})", true, "none");
    step(m, "read_file", R"({"path":"a"})", true, "A");
    step(m, "grep", R"({"pattern":"y"})", true, "none");
    CHECK(fired(step(m, "read_file", R"({"path":"a"})", true, "A"), detector_id::exact));
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
