// Compatibility presets: test cases ported from each system's own public test suite. Each case
// names the upstream file and test it reproduces (docs/presets.md lists the sources).
#include <string>

#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;

TEST_SUITE("preset.ralph") {
  // ralph-orchestrator's Python tests/test_loop_detection.py, class TestLoopDetection (the
  // upstream repo now holds the Rust rewrite; the copy read is described in presets-research.md).
  TEST_CASE("test_loop_detected_identical_outputs") {
    ExecutionEconomicsManager m(preset("ralph"));
    CHECK(m.on_text("Checking the database for user information...").allowed());
    CHECK(m.on_text("Checking the database for user information...").action == action::terminate);
  }
  TEST_CASE("test_loop_detected_similar_outputs (ratio 93.2)") {
    ExecutionEconomicsManager m(preset("ralph"));
    m.on_text("I'm checking the database for user information now.");
    CHECK(m.on_text("I'm checking the database for user information here.").action ==
          action::terminate);
  }
  TEST_CASE("test_no_loop_different_outputs") {
    ExecutionEconomicsManager m(preset("ralph"));
    for (const char* s :
         {"Step 1: Creating the configuration file",
          "Step 2: Installing dependencies from requirements.txt", "Step 3: Running the test suite",
          "Step 4: Building the documentation", "Step 5: Deploying to production server"}) {
      CHECK(m.on_text(s).allowed());
    }
  }
  TEST_CASE("test_loop_detection_window_size") {
    ExecutionEconomicsManager m(preset("ralph"));
    const char* outs[] = {"Starting database connection and initializing schema",
                          "Parsing configuration from YAML file successfully",
                          "Downloading dependencies from remote repository",
                          "Compiling TypeScript source files to JavaScript",
                          "Running integration tests against staging server",
                          "Deploying application to production cluster now"};
    for (const char* s : outs) CHECK(m.on_text(s).allowed());
    CHECK(m.on_text(outs[0]).allowed());  // evicted from the last five
  }
  TEST_CASE("test_loop_detection_empty_output") {
    ExecutionEconomicsManager m(preset("ralph"));
    CHECK(m.on_text("").allowed());
    CHECK(m.on_text("").allowed());
  }
  TEST_CASE("test_loop_detection_short_outputs") {
    ExecutionEconomicsManager m(preset("ralph"));
    m.on_text("Done");
    CHECK(m.on_text("Done").action == action::terminate);
  }
  TEST_CASE("test_reset_clears_loop_history") {
    ExecutionEconomicsManager m(preset("ralph"));
    m.on_text("Repeating output pattern");
    m.reset();
    CHECK(m.on_text("Repeating output pattern").allowed());
  }
  TEST_CASE("test_loop_threshold_boundary (ratio 53.5)") {
    ExecutionEconomicsManager m(preset("ralph"));
    m.on_text("Processing data from the input source now");
    CHECK(m.on_text("Computing results from the output target here").allowed());
  }
  TEST_CASE("test_loop_detection_with_numbers (ratio 96.6)") {
    ExecutionEconomicsManager m(preset("ralph"));
    m.on_text("Iteration 1: Processing batch");
    CHECK(m.on_text("Iteration 2: Processing batch").action == action::terminate);
  }
  TEST_CASE("SafetyGuard.check: 100 iterations run, the 101st stops") {
    ExecutionEconomicsManager m(preset("ralph"));
    for (int i = 0; i < 100; ++i) {
      CHECK(m.on_text("iteration " + std::to_string(i) +
                      std::string(static_cast<std::size_t>(i % 7) * 9, '#') + " distinct text " +
                      std::to_string(i * 7919))
                .action != action::terminate);
      m.on_tool_call_json("t", R"({"i":)" + std::to_string(i) + "}");
      m.on_tool_result("t", true, std::to_string(i));
    }
    const verdict v = m.on_text("iteration 101, which the guard does not allow to start");
    CHECK(v.action == action::terminate);
    CHECK(fired(v, detector_id::limit));
  }
}

TEST_SUITE("preset.aaagent") {
  // austinjan/aaagent-rs src/llm/loop_detector.rs, mod tests.
  TEST_CASE("test_exact_duplicate_detection") {
    ExecutionEconomicsManager m(preset("aaagent"));
    for (int i = 0; i < 3; ++i) CHECK(m.on_tool_call_json("bash", R"({"command":"ls"})").allowed());
    const verdict v = m.on_tool_call_json("bash", R"({"command":"ls"})");
    REQUIRE(fired(v, detector_id::exact));
    CHECK(get(v, detector_id::exact).count == 4);
    CHECK(v.level == severity::warn);
  }
  TEST_CASE("test_different_calls_no_loop") {
    ExecutionEconomicsManager m(preset("aaagent"));
    for (const char* c : {"ls", "pwd", "echo hello", "ls"}) {
      CHECK(m.on_tool_call_json("bash", std::string(R"({"command":")") + c + "\"}").allowed());
    }
  }
  TEST_CASE("test_pattern_detection_ab_ab") {
    ExecutionEconomicsManager m(preset("aaagent"));
    for (int i = 0; i < 2; ++i) {
      CHECK(m.on_tool_call_json("tool_a", R"({"param":"value_a"})").allowed());
      CHECK(m.on_tool_call_json("tool_b", R"({"param":"value_b"})").allowed());
    }
    CHECK(fired(m.on_tool_call_json("tool_a", R"({"param":"value_a"})"), detector_id::cycle));
  }
  TEST_CASE("test_pattern_detection_abc_abc") {
    ExecutionEconomicsManager m(preset("aaagent"));
    for (int i = 0; i < 2; ++i) {
      CHECK(m.on_tool_call_json("tool_a", R"({"x":1})").allowed());
      CHECK(m.on_tool_call_json("tool_b", R"({"x":2})").allowed());
      CHECK(m.on_tool_call_json("tool_c", R"({"x":3})").allowed());
    }
    CHECK(fired(m.on_tool_call_json("tool_a", R"({"x":1})"), detector_id::cycle));
  }
  TEST_CASE("test_clear") {
    ExecutionEconomicsManager m(preset("aaagent"));
    m.on_tool_call_json("bash", R"({"command":"ls"})");
    m.on_tool_call_json("bash", R"({"command":"ls"})");
    m.reset();
    for (int i = 0; i < 3; ++i) CHECK(m.on_tool_call_json("bash", R"({"command":"ls"})").allowed());
    CHECK_FALSE(m.on_tool_call_json("bash", R"({"command":"ls"})").allowed());
  }
  TEST_CASE("graduated response: warn, warn, terminate (LoopDetectorConfig::default actions)") {
    ExecutionEconomicsManager m(preset("aaagent"));
    for (int i = 0; i < 3; ++i) m.on_tool_call_json("bash", R"({"command":"ls"})");
    CHECK(m.on_tool_call_json("bash", R"({"command":"ls"})").action == action::nudge);
    CHECK(m.on_tool_call_json("bash", R"({"command":"ls"})").action == action::nudge);
    CHECK(m.on_tool_call_json("bash", R"({"command":"ls"})").action == action::terminate);
  }
}

TEST_SUITE("preset.attocode") {
  // eren23/attocode attocode/tests/economics-doom-loop.test.ts, describe "Doom Loop Detection".
  TEST_CASE("should detect exact doom loop at threshold 3") {
    ExecutionEconomicsManager m(preset("attocode"));
    m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})");
    m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})");
    CHECK(fired(m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})"), detector_id::exact));
  }
  TEST_CASE("should detect fuzzy doom loop with near-identical calls") {
    ExecutionEconomicsManager m(preset("attocode"));
    CHECK(m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})").allowed());
    CHECK(m.on_tool_call_json("read_file", R"({"path":"/foo.ts","encoding":"utf8"})").allowed());
    CHECK(m.on_tool_call_json("read_file", R"({"path":"/foo.ts","timeout":5000})").allowed());
    CHECK(fired(m.on_tool_call_json("read_file", R"({"path":"/foo.ts","lines":100})"),
                detector_id::structural));
  }
  TEST_CASE("should reset after different tool breaks the sequence") {
    ExecutionEconomicsManager m(preset("attocode"));
    m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})");
    m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})");
    m.on_tool_call_json("write_file", R"({"path":"/bar.ts","content":"x"})");
    CHECK(m.on_tool_call_json("read_file", R"({"path":"/foo.ts"})").allowed());
  }
  TEST_CASE("should not false-positive on varied primary args") {
    ExecutionEconomicsManager m(preset("attocode"));
    for (const char* p : {"/a.ts", "/b.ts", "/c.ts", "/d.ts"}) {
      CHECK(m.on_tool_call_json("read_file", std::string(R"({"path":")") + p + "\"}").allowed());
    }
  }
  // attocode/tests/economics-bash-failures.test.ts.
  TEST_CASE("Bash Failure Cascade: 3 consecutive bash failures") {
    ExecutionEconomicsManager m(preset("attocode"));
    step(m, "bash", R"({"command":"npm install foo"})", false, "ERR! 404");
    step(m, "bash", R"({"command":"yarn add foo"})", false, "Not found");
    m.on_tool_call_json("bash", R"({"command":"pnpm add foo"})");
    CHECK(fired(m.on_tool_result("bash", false, "Not found"), detector_id::bash_cascade));
  }
  TEST_CASE("Test-Fix Cycle with object results: detects test failures from bash results") {
    ExecutionEconomicsManager m(preset("attocode"));
    step(m, "write_file", R"({"path":"/fix.ts"})", true, "ok");
    step(m, "bash", R"({"command":"npm test"})", false, "FAILED: 3 tests\n1 failed, 2 passed");
    step(m, "edit_file", R"({"path":"/fix.ts","v":1})", true, "ok");
    step(m, "bash", R"({"command":"npm test --verbose"})", false, "FAILED: 2 tests");
    step(m, "edit_file", R"({"path":"/fix.ts","v":2})", true, "ok");
    m.on_tool_call_json("bash", R"({"command":"npx jest"})");
    CHECK(fired(m.on_tool_result("bash", false, "FAILED: 1 test"), detector_id::test_fix));
  }
  TEST_CASE("summary loop: two text-only turns") {
    ExecutionEconomicsManager m(preset("attocode"));
    CHECK(m.on_text("Let me think about this.").allowed());
    CHECK(fired(m.on_text("Still thinking about the plan."), detector_id::summary));
  }
}

TEST_SUITE("preset.gemini-cli") {
  // google-gemini/gemini-cli packages/core/src/services/loopDetectionService.test.ts.
  const std::string r50 = "This is a unique sentence, id=1. This is a unique ";

  TEST_CASE("should detect a loop on the TOOL_CALL_LOOP_THRESHOLD-th identical call") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 4; ++i)
      CHECK(m.on_tool_call_json("testTool", R"({"param":"value"})").allowed());
    CHECK(fired(m.on_tool_call_json("testTool", R"({"param":"value"})"), detector_id::exact));
  }
  TEST_CASE("should not detect a loop for different tool calls") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 3; ++i) {
      CHECK(m.on_tool_call_json("testTool", R"({"param":"value1"})").allowed());
      CHECK(m.on_tool_call_json("testTool", R"({"param":"value2"})").allowed());
      CHECK(m.on_tool_call_json("anotherTool", R"({"param":"value1"})").allowed());
    }
  }
  TEST_CASE("should not reset tool call counter for other event types") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 4; ++i) m.on_tool_call_json("testTool", R"({"param":"value"})");
    m.on_text("a thought");
    CHECK(fired(m.on_tool_call_json("testTool", R"({"param":"value"})"), detector_id::exact));
  }
  TEST_CASE("should correctly transition from Strike 1 to Strike 2") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 4; ++i) m.on_tool_call_json("testTool", R"({"param":"value"})");
    CHECK(m.on_tool_call_json("testTool", R"({"param":"value"})").action == action::nudge);
    CHECK(m.on_tool_call_json("testTool", R"({"param":"value"})").action == action::terminate);
  }
  TEST_CASE("should detect a loop when a chunk of content repeats consecutively") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(fired(m.on_text_chunk(r50), detector_id::content));
  }
  TEST_CASE("should not detect a loop for a list with a long shared prefix") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    std::string text;
    for (int i = 0; i < 15; ++i) {
      text += "- projects/my-google-cloud-project-12345/locations/us-central1/services/" +
              std::to_string(i) + "\n";
    }
    CHECK(m.on_text_chunk(text).allowed());
  }
  TEST_CASE("should reset tracking when a table is detected (table on its own line)") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(m.on_text_chunk("\n| Column 1 | Column 2 |\n").allowed());
    for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
  }
  TEST_CASE("should reset tracking when a code fence is found") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(m.on_text_chunk("\n```\n").allowed());
    for (int i = 0; i < 10; ++i) CHECK(m.on_text_chunk(r50).allowed());
  }
  TEST_CASE("should detect a loop when repetitive content is outside a code block") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("```\n").allowed());
    CHECK(m.on_text_chunk("some code\n").allowed());
    CHECK(m.on_text_chunk("```\n").allowed());
    for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(fired(m.on_text_chunk(r50), detector_id::content));
  }
  TEST_CASE("Divider Content Detection") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 15; ++i) CHECK(m.on_text_chunk(std::string(50, '-') + "\n").allowed());
  }
  TEST_CASE("tool call should reset content count") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 9; ++i) m.on_text_chunk("Some content.");
    m.on_tool_call_json("testTool", "{}");
    CHECK(m.on_text_chunk("Fresh content.").allowed());
  }
}

TEST_SUITE("preset.openhands") {
  // OpenHands/OpenHands (formerly All-Hands-AI/OpenHands) tests/unit/controller/test_is_stuck.py,
  // class TestStuckDetector.
  TEST_CASE("test_history_too_short") {
    ExecutionEconomicsManager m(preset("openhands"));
    CHECK(step(m, "execute_bash", R"({"command":"ls"})", true, "file1.txt\nfile2.txt").allowed());
  }
  TEST_CASE("test_is_stuck_repeating_action_observation") {
    ExecutionEconomicsManager m(preset("openhands"));
    for (int i = 0; i < 3; ++i) {
      CHECK(step(m, "execute_bash", R"({"command":"ls"})", true, "").allowed());
    }
    CHECK(m.on_tool_call_json("execute_bash", R"({"command":"ls"})").action == action::terminate);
  }
  TEST_CASE("test_is_stuck_repeating_action_observation_pattern") {
    ExecutionEconomicsManager m(preset("openhands"));
    verdict v;
    for (int i = 0; i < 3; ++i) {
      step(m, "execute_bash", R"({"command":"ls"})", true, "file1.txt\nfile2.txt");
      v = step(m, "read_file", R"({"path":"file1.txt"})", true, "File content");
    }
    CHECK(v.action == action::terminate);
    CHECK(fired(v, detector_id::cycle));
  }
  TEST_CASE("test_is_stuck_not_stuck") {
    ExecutionEconomicsManager m(preset("openhands"));
    for (int i = 0; i < 2; ++i) {
      CHECK(step(m, "execute_bash", R"({"command":"ls"})", true, "a").allowed());
      CHECK(step(m, "read_file", R"({"path":"file1.txt"})", true, "x").allowed());
      CHECK(step(m, "execute_bash", R"({"command":"pwd"})", true, "/w").allowed());
      CHECK(step(m, "read_file", R"({"path":"file2.txt"})", true, "y").allowed());
    }
  }
  TEST_CASE("test_is_stuck_monologue") {
    ExecutionEconomicsManager m(preset("openhands"));
    m.on_text("Hi there!");
    step(m, "execute_bash", R"({"command":"echo 42"})", true, "42");
    CHECK(m.on_text("I'm doing well, thanks for asking.").allowed());
    CHECK(m.on_text("I'm doing well, thanks for asking.").allowed());
    CHECK(m.on_text("I'm doing well, thanks for asking.").action == action::terminate);
  }
}

TEST_SUITE("preset.openhands-sdk") {
  // OpenHands/software-agent-sdk tests/cross/test_stuck_detector.py.
  TEST_CASE("test_repeating_action_observation_not_stuck_less_than_4_repeats / _stuck") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    for (int i = 0; i < 3; ++i) {
      CHECK(step(m, "terminal", R"({"command":"ls"})", true, "file1.txt\nfile2.txt").allowed());
    }
    CHECK(m.on_tool_call_json("terminal", R"({"command":"ls"})").action == action::terminate);
  }
  TEST_CASE("test_agent_monologue_stuck (contents differ)") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    m.on_text("I'm thinking... 0");
    m.on_text("I'm thinking... 1");
    CHECK(m.on_text("I'm thinking... 2").action == action::terminate);
  }
  TEST_CASE("test_not_stuck_with_different_actions") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    for (const char* c : {"ls", "pwd", "whoami", "date"}) {
      CHECK(step(m, "terminal", std::string(R"({"command":")") + c + "\"}", true,
                 std::string("out of ") + c)
                .allowed());
    }
  }
}

TEST_SUITE("preset.cline") {
  // cline/cline src/core/task/__tests__/loop-detection.test.ts.
  TEST_CASE("should warn at 3 identical calls and escalate at 5") {
    ExecutionEconomicsManager m(preset("cline"));
    std::vector<severity> levels;
    for (int i = 0; i < 5; ++i)
      levels.push_back(m.on_tool_call_json("read_file", R"({"path":"src/main.ts"})").level);
    CHECK(levels == std::vector<severity>{severity::none, severity::none, severity::warn,
                                          severity::none, severity::critical});
  }
  TEST_CASE("should reset when tool or params change") {
    ExecutionEconomicsManager m(preset("cline"));
    m.on_tool_call_json("read_file", R"({"path":"a.ts"})");
    m.on_tool_call_json("read_file", R"({"path":"a.ts"})");
    CHECK(m.on_tool_call_json("read_file", R"({"path":"b.ts"})").allowed());
    CHECK(m.on_tool_call_json("read_file", R"({"path":"b.ts"})").allowed());
    CHECK(m.on_tool_call_json("list_files", R"({"path":"b.ts"})").allowed());
  }
  TEST_CASE("should NOT count different tools with same params as identical") {
    ExecutionEconomicsManager m(preset("cline"));
    for (const char* t : {"read_file", "search_files", "list_files"}) {
      CHECK(m.on_tool_call_json(t, R"({"path":"src/main.ts"})").allowed());
    }
  }
  TEST_CASE("should strip task_progress from comparison") {
    ExecutionEconomicsManager m(preset("cline"));
    std::vector<severity> levels;
    for (int i = 0; i < 5; ++i) {
      levels.push_back(
          m.on_tool_call_json("read_file", R"({"path":"src/index.ts","task_progress":"step )" +
                                               std::to_string(i) + R"( of 5"})")
              .level);
    }
    CHECK(levels[2] == severity::warn);
    CHECK(levels[4] == severity::critical);
  }
}

TEST_SUITE("preset.roo-code") {
  // RooCodeInc/Roo-Code src/core/tools/__tests__/ToolRepetitionDetector.spec.ts.
  TEST_CASE("should default to a limit of 3 if no argument provided") {
    ExecutionEconomicsManager m(preset("roo-code"));
    for (int i = 0; i < 3; ++i) CHECK(m.on_tool_call_json("test-tool", "{}").allowed());
    const verdict v = m.on_tool_call_json("test-tool", "{}");
    CHECK(v.action == action::reject);
    CHECK(v.strongest().message.find("test-tool") != std::string::npos);
  }
  TEST_CASE("should allow execution of previously problematic tool after reset") {
    ExecutionEconomicsManager m(preset("roo-code"));
    for (int i = 0; i < 3; ++i) m.on_tool_call_json("problem-tool", "{}");
    CHECK(m.on_tool_call_json("problem-tool", "{}").action == action::reject);
    for (int i = 0; i < 3; ++i) CHECK(m.on_tool_call_json("problem-tool", "{}").allowed());
    CHECK(m.on_tool_call_json("problem-tool", "{}").action == action::reject);
  }
  TEST_CASE("should reset the counter when different tool calls are made") {
    ExecutionEconomicsManager m(preset("roo-code"));
    for (int i = 0; i < 3; ++i) {
      CHECK(m.on_tool_call_json("same-tool", "{}").allowed());
      CHECK(m.on_tool_call_json("different-tool", "{}").allowed());
    }
  }
  TEST_CASE("should treat tools with same parameters in different order as identical") {
    ExecutionEconomicsManager m(preset("roo-code"));
    m.on_tool_call_json("same-tool", R"({"a":1,"b":2,"c":3})");
    m.on_tool_call_json("same-tool", R"({"c":3,"a":1,"b":2})");
    m.on_tool_call_json("same-tool", R"({"b":2,"c":3,"a":1})");
    CHECK(m.on_tool_call_json("same-tool", R"({"a":1,"c":3,"b":2})").action == action::reject);
  }
}

TEST_SUITE("preset.goose") {
  // goose (aaif-goose/goose, formerly block/goose)
  // crates/goose/tests/repetition_inspector_tests.rs.
  TEST_CASE("RepetitionInspector::new(None) never limits repetitions") {
    ExecutionEconomicsManager m(preset("goose"));
    for (int i = 0; i < 100; ++i)
      CHECK(m.on_tool_call_json("fetch_user", R"({"id":123})").allowed());
  }
  TEST_CASE("test_error_pattern_fires_after_threshold") {
    ExecutionEconomicsManager m(preset("goose"));
    step(m, "my_tool", R"({"a":1})", false, "404 Not Found");
    step(m, "my_tool", R"({"a":2})", false, "404 Not Found");
    m.on_tool_call_json("my_tool", R"({"a":3})");
    CHECK(fired(m.on_tool_result("my_tool", false, "404 Not Found"), detector_id::result));
  }
  TEST_CASE("test_error_pattern_does_not_fire_before_threshold") {
    ExecutionEconomicsManager m(preset("goose"));
    step(m, "my_tool", "{}", false, "404 Not Found");
    m.on_tool_call_json("my_tool", "{}");
    CHECK(m.on_tool_result("my_tool", false, "404 Not Found").allowed());
  }
  TEST_CASE("test_error_pattern_resets_on_success") {
    ExecutionEconomicsManager m(preset("goose"));
    step(m, "my_tool", "{}", false, "404 Not Found");
    step(m, "my_tool", "{}", false, "404 Not Found");
    step(m, "my_tool", "{}", true, "200 OK");
    m.on_tool_call_json("my_tool", "{}");
    CHECK(m.on_tool_result("my_tool", false, "404 Not Found").allowed());
  }
  TEST_CASE("test_error_pattern_does_not_cross_tool_names") {
    ExecutionEconomicsManager m(preset("goose"));
    step(m, "tool_a", "{}", false, "404 Not Found");
    step(m, "tool_a", "{}", false, "404 Not Found");
    m.on_tool_call_json("tool_b", "{}");
    CHECK(m.on_tool_result("tool_b", false, "404 Not Found").allowed());
  }
}

TEST_SUITE("preset.openclaw") {
  // openclaw/openclaw src/agents/tool-loop-detection.test.ts, describe "tool-loop-detection".
  TEST_CASE("warns on generic repeated tool+args calls") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 10; ++i)
      CHECK(m.on_tool_call_json("read", R"({"path":"/same.txt"})").allowed());
    const verdict v = m.on_tool_call_json("read", R"({"path":"/same.txt"})");
    CHECK(v.level == severity::warn);
    CHECK(fired(v, detector_id::exact));
  }
  TEST_CASE("does not flag unique tool calls") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 15; ++i) {
      CHECK(m.on_tool_call_json("read", R"({"path":"/file-)" + std::to_string(i) + R"(.txt"})")
                .allowed());
    }
    CHECK(m.on_tool_call_json("read", R"({"path":"/new-file.txt"})").allowed());
  }
  TEST_CASE("blocks generic no-progress loops at critical threshold") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 20; ++i) step(m, "read", R"({"path":"/same.txt"})", true, "same output");
    CHECK(m.on_tool_call_json("read", R"({"path":"/same.txt"})").action == action::reject);
  }
  TEST_CASE("warns on ping-pong alternating patterns") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 9; ++i) {
      const verdict v = i % 2 == 0 ? m.on_tool_call_json("read", R"({"path":"/a.txt"})")
                                   : m.on_tool_call_json("list", R"({"dir":"/workspace"})");
      CHECK_FALSE(fired(v, detector_id::cycle));
    }
    const verdict v = m.on_tool_call_json("list", R"({"dir":"/workspace"})");
    REQUIRE(fired(v, detector_id::cycle));
    CHECK(v.level == severity::warn);
  }
  TEST_CASE("does not flag ping-pong when alternation is broken") {
    ExecutionEconomicsManager m(preset("openclaw"));
    m.on_tool_call_json("read", R"({"path":"/a.txt"})");
    m.on_tool_call_json("list", R"({"dir":"/workspace"})");
    m.on_tool_call_json("read", R"({"path":"/a.txt"})");
    m.on_tool_call_json("write", R"({"path":"/tmp/out.txt"})");
    CHECK(m.on_tool_call_json("list", R"({"dir":"/workspace"})").allowed());
  }
}
