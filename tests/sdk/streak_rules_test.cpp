// Rules 10-12: test-fix cycles, shell failure cascades, safety limits.
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;

TEST_SUITE("test_fix") {
  TEST_CASE("three failing test runs in a row, edits in between") {
    ExecutionEconomicsManager m;
    verdict last;
    for (int i = 0; i < 3; ++i) {
      step(m, "edit_file", R"({"path":"p.cc","new":")" + std::to_string(i) + "\"}", true, "ok");
      m.on_tool_call_json("bash", R"({"command":"ctest --output-on-failure"})");
      last = m.on_tool_result("bash", false, "1 test failed (attempt " + std::to_string(i) + ")");
    }
    REQUIRE(fired(last, detector_id::test_fix));
    CHECK(get(last, detector_id::test_fix).count == 3);
  }

  TEST_CASE("test commands are recognized across ecosystems") {
    const char* cmds[] = {"pytest -q",         "go test ./...",    "cargo test",
                          "npm test",          "make test",        "python -m pytest tests",
                          "cd build && ctest", "yarn run test:ci", "npx jest --ci"};
    for (const char* c : cmds) {
      CAPTURE(c);
      ExecutionEconomicsManager m;
      verdict v;
      for (int i = 0; i < 3; ++i) {
        m.on_tool_call_json("bash", std::string(R"({"command":")") + c + "\"}");
        v = m.on_tool_result("bash", false, "FAILED " + std::to_string(i));
      }
      CHECK(fired(v, detector_id::test_fix));
    }
  }

  TEST_CASE("a passing run resets, reported failures count even when the call succeeded") {
    ExecutionEconomicsManager m;
    step(m, "run_tests", "{}", false, "2 failed");
    step(m, "run_tests", "{}", true, "10 passed");
    m.on_tool_call_json("run_tests", "{}");
    CHECK_FALSE(
        fired(m.on_tool_result("run_tests", true, "3 failed, 7 passed"), detector_id::test_fix));
    m.on_tool_call_json("run_tests", "{}");
    m.on_tool_result("run_tests", true, "1 failed, 9 passed");
    m.on_tool_call_json("run_tests", "{}");
    CHECK(fired(m.on_tool_result("run_tests", true, "FAILED test_x"), detector_id::test_fix));
  }

  TEST_CASE("another test command after a failure is no rerun: it counts only if it failed alike") {
    // Without pytest, then a file that is not there, then the real file: nothing was changed
    // between them, and each failed its own way.
    const char* runs[][2] = {
        {"/usr/bin/python3 -m pytest tests/test_autodoc_x.py",
         "/usr/bin/python3: No module named pytest"},
        {"pytest tests/test_autodoc_x.py", "ERROR: file or directory not found: tests/x.py"},
        {"pytest tests/test_autodoc.py",
         "tests/test_autodoc.py F\nE   AssertionError: assert 'x' == 'y'\n1 failed, 40 passed"},
    };
    ExecutionEconomicsManager m;
    for (const auto& run : runs) {
      CAPTURE(run[0]);
      m.on_tool_call_json("bash", std::string(R"({"command":")") + run[0] + "\"}");
      CHECK_FALSE(fired(m.on_tool_result("bash", false, run[1]), detector_id::test_fix));
    }
    // The same failing command again, unchanged, is a rerun whatever it prints: the third of
    // that run fires.
    verdict last;
    for (const char* out : {"KeyError: 'a'\n1 failed", "ValueError: b\n2 failed"}) {
      m.on_tool_call_json("bash", R"({"command":"pytest tests/test_autodoc.py"})");
      last = m.on_tool_result("bash", false, out);
    }
    CHECK(fired(last, detector_id::test_fix));
  }

  TEST_CASE("results whose call is unknown are no reruns: they count when they failed alike") {
    ExecutionEconomicsManager m;
    const char* failures[] = {"E   TypeError: 'staticmethod' object is not callable",
                              "E   KeyError: 'collect_ignore'",
                              "E   AttributeError: 'int' object has no attribute 'split'"};
    for (const char* failure : failures) {  // no on_tool_call: unpaired
      CHECK_FALSE(fired(m.on_tool_result("run_tests", false, std::string("1 failed\n") + failure),
                        detector_id::test_fix));
    }
    verdict last;
    for (int i = 0; i < 3; ++i) last = m.on_tool_result("run_tests", false, "1 failed\nE   X");
    CHECK(fired(last, detector_id::test_fix));
  }

  TEST_CASE("a file written by inline code is a change between two failing runs") {
    // Each run fails its own way after a fix written with `python3 -c`: debugging, not a rerun.
    // The same runs with a script that only reads the file between them are reruns.
    for (const bool writes : {true, false}) {
      CAPTURE(writes);
      ExecutionEconomicsManager m;
      const char* failures[] = {"E   TypeError: 'staticmethod' object is not callable",
                                "E   KeyError: 'collect_ignore'",
                                "E   AttributeError: 'int' object has no attribute 'split'"};
      verdict last;
      int i = 0;
      for (const char* failure : failures) {
        const std::string n = std::to_string(i++);  // each its own: a repeated one is no change
        const std::string fix =
            writes ? R"(python3 -c 'open(\"m.py\", \"w\").write(\")" + n + R"(\")')"
                   : R"(python3 -c 'print(open(\"m.py\").read()[)" + n + R"(:])')";
        step(m, "bash", R"({"command":")" + fix + "\"}", true, "");
        m.on_tool_call_json("bash", R"({"command":"pytest t.py"})");
        last = m.on_tool_result("bash", true, std::string("1 failed\n") + failure);
      }
      CHECK(fired(last, detector_id::test_fix) == !writes);
    }
  }

  TEST_CASE("a change that moves the failure restarts the count, the same failure does not") {
    ExecutionEconomicsManager m;
    const char* failures[] = {"E   TypeError: 'staticmethod' object is not callable",
                              "E   TypeError: is_rewrite_disabled() missing 1 required argument",
                              "E   AttributeError: 'int' object has no attribute 'startswith'"};
    for (int i = 0; i < 3; ++i) {
      step(m, "edit_file", R"({"path":"r.py","new":")" + std::to_string(i) + "\"}", true, "ok");
      m.on_tool_call_json("bash", R"({"command":"pytest t.py"})");
      CHECK(m.on_tool_result("bash", true, std::string("1 failed\n") + failures[i]).allowed());
    }
    // Two more changes that leave the same failure: the fixes are not converging.
    verdict v;
    for (int i = 3; i < 5; ++i) {
      step(m, "edit_file", R"({"path":"r.py","new":")" + std::to_string(i) + "\"}", true, "ok");
      m.on_tool_call_json("bash", R"({"command":"pytest t.py"})");
      v = m.on_tool_result("bash", true, std::string("1 failed\n") + failures[2]);
    }
    REQUIRE(fired(v, detector_id::test_fix));
    CHECK(get(v, detector_id::test_fix).count == 3);
  }

  TEST_CASE("tests that pass after different edits are healthy") {
    ExecutionEconomicsManager m;
    for (int i = 0; i < 6; ++i) {
      step(m, "edit_file", R"({"path":"p.cc","new":")" + std::to_string(i) + "\"}", true, "ok");
      m.on_tool_call_json("bash", R"({"command":"ctest"})");
      CHECK(m.on_tool_result("bash", true, std::to_string(10 + i) + " tests passed").allowed());
    }
  }
}

TEST_SUITE("bash_cascade") {
  TEST_CASE("failing file operations point to the file tools") {
    ExecutionEconomicsManager m;
    const char* cmds[] = {"cat missing.txt", "sed -n 1,5p missing.txt", "echo x > /ro/file"};
    verdict v;
    for (const char* c : cmds) {
      m.on_tool_call_json("bash", std::string(R"({"command":")") + c + "\"}");
      v = m.on_tool_result("bash", false, "No such file or directory");
    }
    REQUIRE(fired(v, detector_id::bash_cascade));
    CHECK(get(v, detector_id::bash_cascade).message.find("file tools") != std::string::npos);
  }

  TEST_CASE("other failing commands get a plain cascade warning") {
    ExecutionEconomicsManager m;
    const char* cmds[] = {"npm install foo", "yarn add foo", "pnpm add foo"};
    verdict v;
    for (const char* c : cmds) {
      m.on_tool_call_json("bash", std::string(R"({"command":")") + c + "\"}");
      v = m.on_tool_result("bash", false, "ERR! network unreachable (registry.npmjs.org)");
    }
    REQUIRE(fired(v, detector_id::bash_cascade));
    CHECK(get(v, detector_id::bash_cascade).message.find("file tools") == std::string::npos);
    CHECK(get(v, detector_id::bash_cascade).message.find("the same way") != std::string::npos);
  }

  TEST_CASE("different commands failing differently are exploration, until a person would stop") {
    // Locating a build: make, make clean && make, a wrong binary path, each failing its own way.
    ExecutionEconomicsManager m;
    const char* cmds[][2] = {
        {"make", "make: *** No targets specified and no makefile found.  Stop."},
        {"make clean && make", "make: *** No rule to make target 'clean'.  Stop."},
        {"./build/bin/app --version", "bash: ./build/bin/app: No such file or directory"}};
    for (const auto& c : cmds) {
      m.on_tool_call_json("bash", std::string(R"({"command":")") + c[0] + "\"}");
      CHECK(m.on_tool_result("bash", false, c[1]).allowed());
    }
    // Ten failures in a row, alike or not, are past the point where a person stops to think.
    const char* more[][2] = {
        {"ls build", "ls: cannot access 'build': No such file or directory"},
        {"cmake -S . -B out", "CMake Error: The source directory does not exist"},
        {"./configure", "bash: ./configure: Permission denied"},
        {"python3 setup.py build", "error: invalid command 'build_ext'"},
        {"ninja -C out", "ninja: error: loading 'build.ninja': not found"},
        {"which gcc", ""},
        {"apt list --installed gcc", "WARNING: apt does not have a stable CLI"}};
    verdict v;
    for (std::size_t i = 0; i < std::size(more); ++i) {
      m.on_tool_call_json("bash", std::string(R"({"command":")") + more[i][0] + "\"}");
      v = m.on_tool_result("bash", false, more[i][1]);
      if (i + 1 < std::size(more)) CHECK_FALSE(fired(v, detector_id::bash_cascade));
    }
    REQUIRE(fired(v, detector_id::bash_cascade));
    CHECK(get(v, detector_id::bash_cascade).count == 10);
    CHECK(get(v, detector_id::bash_cascade).loop_start == 1);
  }

  TEST_CASE("a successful shell command resets the cascade, other tools do not") {
    ExecutionEconomicsManager m;
    step(m, "bash", R"({"command":"a"})", false, "e1");
    step(m, "read_file", R"({"path":"x"})", true, "x");
    step(m, "bash", R"({"command":"b"})", false, "e2");
    step(m, "bash", R"({"command":"ls"})", true, "file");
    m.on_tool_call_json("bash", R"({"command":"c"})");
    CHECK_FALSE(fired(m.on_tool_result("bash", false, "e3"), detector_id::bash_cascade));
  }
}

TEST_SUITE("limit") {
  TEST_CASE("iterations: a warning at 80%, then terminate past the limit") {
    auto c = preset("balanced");
    c.limit.max_iterations = 10;
    ExecutionEconomicsManager m(c);
    bool warned = false;
    for (int i = 1; i <= 10; ++i) {
      const verdict v = m.on_text("turn " + std::to_string(i) + " with some different words " +
                                  std::string(static_cast<std::size_t>(i), 'x'));
      if (i == 8) {
        warned = fired(v, detector_id::limit);
        CHECK(get(v, detector_id::limit).level == severity::warn);
      }
      CHECK(v.action != action::terminate);
      m.on_tool_call_json("t", R"({"i":)" + std::to_string(i) + "}");
      m.on_tool_result("t", true, std::to_string(i));
    }
    CHECK(warned);
    const verdict over = m.on_text("one more");
    CHECK(over.action == action::terminate);
    CHECK(fired(over, detector_id::limit));
  }

  TEST_CASE("wall time uses the injected clock") {
    auto c = preset("balanced");
    c.limit.max_wall_seconds = 100;
    ExecutionEconomicsManager m(c);
    double now = 1000;
    m.set_clock([&] { return now; });
    CHECK(step(m, "a", "{}", true, "1").allowed());
    now = 1050;
    CHECK(step(m, "b", "{}", true, "2").allowed());
    now = 1100;
    CHECK(m.on_tool_call_json("c", "{}").action == action::terminate);
  }

  TEST_CASE("cost reported by the caller") {
    auto c = preset("balanced");
    c.limit.max_cost = 10;
    ExecutionEconomicsManager m(c);
    CHECK(m.add_cost(5).allowed());
    CHECK(m.add_cost(3.5).level == severity::warn);
    CHECK(m.add_cost(2).action == action::terminate);
  }

  TEST_CASE("consecutive failures") {
    auto c = preset("ralph");
    ExecutionEconomicsManager m(c);
    for (int i = 0; i < 4; ++i) {
      m.on_tool_call_json("t" + std::to_string(i), "{}");
      CHECK(m.on_tool_result("t" + std::to_string(i), false, "e").action != action::terminate);
    }
    m.on_tool_call_json("t", "{}");
    CHECK(m.on_tool_result("t", false, "e").action == action::terminate);
  }
}
