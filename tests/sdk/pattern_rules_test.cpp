// Rules 3, 4 and 6: cycles, similar arguments that keep failing, repeated errors.
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::detector_id;
using loopguard::severity;

TEST_SUITE("cycle") {
  TEST_CASE("A-B repeated three times is a cycle") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 2; ++i) {
      step(m, "read_file", R"({"path":"src/auth.py"})", true, "def login(): ...");
      step(m, "run_tests", "{}", false, "1 failed");
    }
    step(m, "read_file", R"({"path":"src/auth.py"})", true, "def login(): ...");
    const verdict v = step(m, "run_tests", "{}", false, "1 failed");
    REQUIRE(fired(v, detector_id::cycle));
    const auto* d = &get(v, detector_id::cycle);
    CHECK(d->count == 3);
    CHECK(d->loop_start == 0);
    CHECK(v.strongest().message.size() > 0);
  }

  TEST_CASE("read-edit-test repeated three times is a cycle of three") {
    ExecutionEconomicsManager m;
    verdict v;
    for (int i = 0; i < 3; ++i) {
      step(m, "read_file", R"({"path":"a.py"})", true, "x");
      step(m, "edit_file", R"({"path":"a.py","old":"a","new":"b"})", true, "ok");
      v = step(m, "run_tests", R"({"path":"tests/"})", false, "FAILED test_login");
    }
    REQUIRE(fired(v, detector_id::cycle));
    CHECK(get(v, detector_id::cycle).count == 3);
  }

  TEST_CASE("the same two tools with different arguments each time are not a cycle") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 6; ++i) {
      const std::string n = std::to_string(i);
      CHECK_FALSE(fired(step(m, "edit_file", R"({"path":"a)" + n + R"(.cc"})", true, "ok"),
                        detector_id::cycle));
      CHECK_FALSE(fired(step(m, "bash", R"({"command":"ctest"})", true, n + " tests passed"),
                        detector_id::cycle));
    }
  }

  TEST_CASE("a cycle whose results change is progress") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 4; ++i) {
      const std::string n = std::to_string(i);
      step(m, "list_jobs", "{}", true, "jobs: " + n);
      CHECK_FALSE(fired(step(m, "job_log", R"({"id":1})", true, "line " + n), detector_id::cycle));
    }
  }
}

TEST_SUITE("similar_args") {
  TEST_CASE("near-identical searches that all come back empty") {
    ExecutionEconomicsManager m;
    CHECK(step(m, "search", R"({"query":"foo"})", false, "No results found.").allowed());
    CHECK(step(m, "search", R"({"query":"fo0"})", false, "No results found.").allowed());
    // The third attempt is often the corrected one: the rule speaks at the fourth.
    CHECK(step(m, "search", R"({"query":"f00"})", false, "No results found.").allowed());
    const verdict v = step(m, "search", R"({"query":"fOo"})", false, "No results found.");
    REQUIRE(fired(v, detector_id::similar_args));
    CHECK(get(v, detector_id::similar_args).count == 4);
  }

  TEST_CASE("similar successful calls are progress (queries of different tables)") {
    ExecutionEconomicsManager m;
    const char* tables[] = {"users1", "users2", "users3", "users4", "users5"};
    for (const char* t : tables) {
      CHECK(step(m, "sql", std::string(R"({"query":"select * from )") + t + R"("})", true,
                 std::string("3 rows from ") + t)
                .allowed());
    }
  }

  TEST_CASE("a success of the same tool in between breaks the run") {
    ExecutionEconomicsManager m;
    step(m, "search", R"({"query":"foo"})", false, "No results found.");
    step(m, "search", R"({"query":"fo0"})", false, "No results found.");
    step(m, "search", R"({"query":"f0o"})", false, "No results found.");
    step(m, "search", R"({"query":"bar"})", true, "3 hits: a.cc b.cc c.cc");
    CHECK_FALSE(fired(step(m, "search", R"({"query":"f00"})", false, "No results found."),
                      detector_id::similar_args));
  }

  TEST_CASE("failing differently each time is not the same dead end") {
    ExecutionEconomicsManager m;
    step(m, "search", R"({"query":"foo"})", false, "error: index busy");
    step(m, "search", R"({"query":"fo0"})", false, "error: bad query");
    step(m, "search", R"({"query":"f0o"})", false, "error: quota exceeded for project 7");
    CHECK_FALSE(fired(step(m, "search", R"({"query":"f00"})", false, "error: timeout"),
                      detector_id::similar_args));
  }
}

TEST_SUITE("result") {
  TEST_CASE("errors that failed alike are the same error, the goose preset wants them equal") {
    // The same linter rejection, quoting the line each different edit would have produced.
    const char* lines[] = {"    return self._cache[key]", "    return self._cache.get(key)",
                           "    return cache[key]"};
    const auto run = [&](ExecutionEconomicsManager& m) {
      verdict v;
      for (int i = 0; i < 3; ++i) {
        m.on_tool_call_json("edit", R"({"line":)" + std::to_string(40 + i * 7) + "}");
        v = m.on_tool_result("edit", false,
                             std::string("Your proposed edit has introduced new syntax error(s).\n"
                                         "ERRORS:\n- E999 IndentationError: unexpected indent\n"
                                         "This is how your edit would have looked:\n") +
                                 lines[i]);
      }
      return v;
    };
    ExecutionEconomicsManager balanced;
    CHECK(fired(run(balanced), detector_id::result));
    ExecutionEconomicsManager goose(preset("goose"));
    CHECK_FALSE(fired(run(goose), detector_id::result));
  }

  TEST_CASE("the same error from different calls") {
    ExecutionEconomicsManager m;
    m.on_tool_call_json("bash", R"({"command":"cat a"})");
    CHECK(m.on_tool_result("bash", false, "No such file or directory").allowed());
    m.on_tool_call_json("bash", R"({"command":"cat b"})");
    CHECK_FALSE(
        fired(m.on_tool_result("bash", false, "No such file or directory"), detector_id::result));
    m.on_tool_call_json("read_file", R"({"path":"c"})");
    const verdict v = m.on_tool_result("read_file", false, "No such file or directory");
    REQUIRE(fired(v, detector_id::result));
    CHECK(get(v, detector_id::result).count == 3);
  }

  TEST_CASE("a success ends the error streak") {
    ExecutionEconomicsManager m;
    step(m, "a", "{}", false, "E");
    step(m, "b", "{}", false, "E");
    step(m, "c", "{}", true, "fine");
    m.on_tool_call_json("d", "{}");
    CHECK_FALSE(fired(m.on_tool_result("d", false, "E"), detector_id::result));
  }
}
