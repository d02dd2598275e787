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

  // The same file at 5411f11 (after #28429: tool-call cycles of 1 to 5 calls, five repetitions).
  TEST_CASE("should not detect a loop for fewer than TOOL_CALL_LOOP_THRESHOLD identical calls") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 4; ++i)
      CHECK(m.on_tool_call_json("testTool", R"({"param":"value"})").allowed());
  }
  TEST_CASE("should detect a loop on subsequent identical calls") {
    // Upstream the detection is sticky until the caller clears it; the caller (client.ts) then
    // counts the next one as strike 2, which is what the 6th call is here.
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 5; ++i) m.on_tool_call_json("testTool", R"({"param":"value"})");
    CHECK(fired(m.on_tool_call_json("testTool", R"({"param":"value"})"), detector_id::exact));
  }
  TEST_CASE("should detect an alternating tool call loop (cycle of length 2)") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    int first = -1;
    for (int i = 0; i < 15 && first < 0; ++i) {
      const verdict v =
          m.on_tool_call_json("read_file", i % 2 == 0 ? R"({"file_path":"loop_a.txt"})"
                                                      : R"({"file_path":"loop_b.txt"})");
      if (fired(v, detector_id::cycle)) first = i;
    }
    CHECK(first == 9);  // five repetitions of the two calls: the 10th call
  }
  TEST_CASE("should detect a cyclic tool call loop of length 3") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    const char* seq[] = {R"({"file_path":"loop_a.txt"})", R"({"file_path":"loop_b.txt"})",
                         R"({"file_path":"loop_c.txt"})"};
    int first = -1;
    for (int i = 0; i < 20 && first < 0; ++i) {
      if (fired(m.on_tool_call_json("read_file", seq[i % 3]), detector_id::cycle)) first = i;
    }
    CHECK(first == 14);
  }
  TEST_CASE("should detect a cyclic tool call loop of length 5") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    int first = -1;
    for (int i = 0; i < 30 && first < 0; ++i) {
      const verdict v = m.on_tool_call_json("t", R"({"id":)" + std::to_string(i % 5 + 1) + "}");
      if (fired(v, detector_id::cycle)) first = i;
    }
    CHECK(first == 24);
  }
  TEST_CASE("should not detect loops for non-looping alternating sequences that vary") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    const char* a = R"({"file_path":"loop_a.txt"})";
    const char* b = R"({"file_path":"loop_b.txt"})";
    for (int i = 0; i < 4; ++i) CHECK(m.on_tool_call_json("read_file", i % 2 ? b : a).allowed());
    CHECK(m.on_tool_call_json("read_file", R"({"file_path":"loop_c.txt"})").allowed());
    for (int i = 0; i < 4; ++i) CHECK(m.on_tool_call_json("read_file", i % 2 ? b : a).allowed());
  }
  TEST_CASE("should not detect a loop for random content") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::uint64_t x = 88172645463325252ULL;  // xorshift: the same "random" text every run
    for (int i = 0; i < 1000; ++i) {
      std::string s;
      for (int j = 0; j < 10; ++j) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s += alphabet[x % alphabet.size()];
      }
      REQUIRE(m.on_text_chunk(s).allowed());
    }
  }
  TEST_CASE("should not detect a loop if repetitions are very far apart") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    std::string filler;
    std::uint64_t x = 2463534242ULL;
    for (int j = 0; j < 2000; ++j) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      filler += static_cast<char>('a' + x % 26);
    }
    for (int i = 0; i < 10; ++i) {
      CHECK(m.on_text_chunk(r50).allowed());
      CHECK(m.on_text_chunk(filler).allowed());
    }
  }
  // The repeating passages of the upstream tests, each streamed until a detection (at most the
  // number of events upstream allows).
  TEST_CASE("content loops upstream expects to be found") {
    std::string s150;
    while (s150.size() < 150) s150 += "This is a unique sentence, id=1. ";
    s150.resize(150);
    const struct {
      const char* name;
      std::string text;
      int events;
    } cases[] = {
        {"should detect a loop with longer repeating patterns (e.g. ~150 chars)", s150, 30},
        {"should detect the specific user-provided loop example",
         "I will not output any text.\n  I will just end the turn.\n  I am done.\n  I will not "
         "do anything else.\n  I will wait for the user's next command.\n",
         30},
        {"should detect the second specific user-provided loop example",
         "I have added all the requested logs and verified the test file. I will now mark the "
         "task as complete.\n  ",
         30},
        {"should detect a loop of alternating short phrases", "Thinking... Done. ", 100},
        {"should detect a loop of repeated complex thought processes",
         "I need to check the file. The file does not exist. I will create the file. ", 30},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      ExecutionEconomicsManager m(preset("gemini-cli"));
      bool found = false;
      for (int i = 0; i < c.events && !found; ++i) {
        found = fired(m.on_text_chunk(c.text), detector_id::content);
      }
      CHECK(found);
    }
  }
  TEST_CASE("should not detect a loop when repetitive content is inside a code block") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("```\n").allowed());
    for (int i = 0; i < 10; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(m.on_text_chunk("\n```").allowed());
  }
  TEST_CASE("should not detect loops when content transitions into a code block") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 8; ++i) m.on_text_chunk(r50);
    CHECK(m.on_text_chunk("```javascript\n").allowed());
    for (int i = 0; i < 10; ++i) CHECK(m.on_text_chunk(r50).allowed());
  }
  TEST_CASE("should skip loop detection when already inside a code block") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("Here is some code:\n```\n").allowed());
    for (int i = 0; i < 15; ++i) CHECK(m.on_text_chunk(r50).allowed());
  }
  TEST_CASE("should correctly track inCodeBlock state with multiple fence transitions") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("Normal text ").allowed());
    CHECK(m.on_text_chunk("```\n").allowed());
    for (int i = 0; i < 5; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(m.on_text_chunk("```\n").allowed());
    CHECK(m.on_text_chunk("```python\n").allowed());
  }
  TEST_CASE("should handle content with multiple code blocks and no loops") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("```\ncode1\n```").allowed());
    CHECK(m.on_text_chunk("\nsome text\n").allowed());
    CHECK(m.on_text_chunk("```\ncode2\n```").allowed());
  }
  TEST_CASE("should handle content with mixed code blocks and looping text") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    m.on_text_chunk("```");
    m.on_text_chunk("\ncode1\n");
    m.on_text_chunk("```");
    for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
    CHECK(fired(m.on_text_chunk(r50), detector_id::content));
  }
  TEST_CASE("should not detect a loop for a long code block with some repeating tokens") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("```\n").allowed());
    for (int i = 0; i < 20; ++i)
      CHECK(m.on_text_chunk("for (let i = 0; i < 10; i++) { console.log(i); }").allowed());
    CHECK(m.on_text_chunk("\n```").allowed());
  }
  // Each element upstream resets the tracking on: nine copies, the element, then nine copies of
  // another passage (upstream's "various ... formats" cases, and the single-element cases).
  TEST_CASE("should reset tracking for various list item, table, heading and quote formats") {
    const char* elements[] = {"* Bullet item",
                              "- Dash item",
                              "+ Plus item",
                              "1. Numbered item",
                              "42. Another numbered item",
                              "| Column 1 | Column 2 |",
                              "|---|---|",
                              "|++|++|",
                              "+---+---+",
                              "# H1 Heading",
                              "## H2 Heading",
                              "### H3 Heading",
                              "#### H4 Heading",
                              "##### H5 Heading",
                              "###### H6 Heading",
                              "> Quote text"};
    int id = 100;
    for (const char* e : elements) {
      CAPTURE(e);
      ExecutionEconomicsManager m(preset("gemini-cli"));
      for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(r50).allowed());
      CHECK(m.on_text_chunk(std::string("\n") + e).allowed());
      std::string other;
      while (other.size() < 50)
        other += "This is a unique sentence, id=" + std::to_string(id) + ". ";
      other.resize(50);
      ++id;
      for (int i = 0; i < 9; ++i) CHECK(m.on_text_chunk(other).allowed());
    }
  }
  TEST_CASE("should handle empty content") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    CHECK(m.on_text_chunk("").allowed());
  }
  TEST_CASE("should not detect a loop for repeating complex box-drawing dividers") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    std::string divider;
    for (int i = 0; i < 25; ++i) divider += "\u256d\u2500";
    for (int i = 0; i < 15; ++i) CHECK(m.on_text_chunk(divider).allowed());
  }
  TEST_CASE("should not detect a loop for repeating divider-like content (no newlines)") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 15; ++i) CHECK(m.on_text_chunk(std::string(50, '-')).allowed());
  }
  TEST_CASE("should allow recovery turn to proceed after clearDetection") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 4; ++i) m.on_tool_call_json("testTool", R"({"param":"value"})");
    CHECK(m.on_tool_call_json("testTool", R"({"param":"value"})").action == action::nudge);
    CHECK(m.on_text_chunk("Recovery text").allowed());
  }
  TEST_CASE("a new user prompt starts everything afresh (reset(promptId))") {
    ExecutionEconomicsManager m(preset("gemini-cli"));
    for (int i = 0; i < 4; ++i) m.on_tool_call_json("testTool", R"({"param":"value"})");
    m.on_user_message("next request");
    for (int i = 0; i < 4; ++i)
      CHECK(m.on_tool_call_json("testTool", R"({"param":"value"})").allowed());
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
  TEST_CASE("test_is_stuck_monologue (an observation between the messages)") {
    ExecutionEconomicsManager m(preset("openhands"));
    CHECK(m.on_text("I'm doing well, thanks for asking.").allowed());
    CHECK(m.on_text("I'm doing well, thanks for asking.").allowed());
    step(m, "execute_bash", R"({"command":"storybook"})", true, "OK, I was stuck, but no more.");
    CHECK(m.on_text("I'm doing well, thanks for asking.").allowed());
    CHECK(m.on_text("I'm doing well, thanks for asking.").allowed());
  }
  TEST_CASE("test_is_stuck_repeating_action_error") {
    // Headless: the user message between the attempts does not count.
    ExecutionEconomicsManager m(preset("openhands"));
    m.on_text("Hello");
    CHECK(step(m, "execute_bash", R"({"command":"invalid_command"})", false, "Command not found")
              .allowed());
    CHECK(step(m, "execute_bash", R"({"command":"invalid_command"})", false,
               "Command still not found or another error")
              .allowed());
    CHECK(m.on_user_message("Done").allowed());
    const verdict v = m.on_tool_call_json("execute_bash", R"({"command":"invalid_command"})");
    CHECK(v.action == action::terminate);
    CHECK(fired(v, detector_id::similar_args));
  }
  TEST_CASE("test_is_not_stuck_invalid_syntax_error_random_lines / _only_three_incidents") {
    // The same cell, answered each time with the error at another line: not a repeat.
    ExecutionEconomicsManager m(preset("openhands"));
    const std::string code =
        R"j({"code":"edit_file_by_replace('book_store.py', to_replace=...)"})j";
    for (int i = 0; i < 4; ++i) {
      const std::string out = "  Cell In[1], line " + std::to_string((i + 1) * 10) +
                              "\nto_replace=\"\"\"def largest(min_factor, max_factor):\n    ^\n"
                              "SyntaxError: invalid syntax. Perhaps you forgot a comma?" +
                              std::string(static_cast<std::size_t>(i + 1), '\n') +
                              "\n[Jupyter current working directory:\n[Jupyter Python interpreter:";
      CHECK(step(m, "execute_ipython_cell", code, true, out).allowed());
    }
  }
  TEST_CASE("test_is_stuck_invalid_syntax_error (the same error four times)") {
    ExecutionEconomicsManager m(preset("openhands"));
    const std::string code =
        R"j({"code":"edit_file_by_replace('book_store.py', to_replace=...)"})j";
    const std::string out =
        "  Cell In[1], line 42\nSyntaxError: invalid syntax. Perhaps you forgot a comma?";
    for (int i = 0; i < 3; ++i) CHECK(step(m, "execute_ipython_cell", code, true, out).allowed());
    CHECK(m.on_tool_call_json("execute_ipython_cell", code).action == action::terminate);
  }
  TEST_CASE("test_is_not_stuck_ipython_syntax_error_not_at_end") {
    ExecutionEconomicsManager m(preset("openhands"));
    const char* outs[] = {"SyntaxError: unterminated string literal (detected at line 1)\nThis is",
                          "SyntaxError: unterminated string literal (detected at line 1)\nToo much",
                          "SyntaxError: unterminated string literal (detected at line 3)\nEnough",
                          "SyntaxError: unterminated string literal (detected at line 2)\nLast"};
    for (const char* out : outs) {
      CHECK(step(m, "execute_ipython_cell", R"({"code":"print(\"hello"})", true, out).allowed());
    }
  }
  TEST_CASE("test_interactive_mode_resets_after_user_message (headless: still stuck)") {
    ExecutionEconomicsManager m(preset("openhands"));
    for (int i = 0; i < 3; ++i) step(m, "execute_bash", R"({"command":"ls"})", true, "");
    m.on_user_message("Hello");
    CHECK(m.on_tool_call_json("execute_bash", R"({"command":"ls"})").action == action::terminate);
  }
  TEST_CASE("test_fail_guard_five_actions / test_loop_ignores_extra_actions") {
    // read, ls, read, ls, read: five calls, not yet three repetitions; the sixth makes them.
    ExecutionEconomicsManager m(preset("openhands"));
    for (int i = 0; i < 2; ++i) {
      CHECK(step(m, "read_file", R"({"path":"file1.txt"})", true, "File content").allowed());
      CHECK(step(m, "execute_bash", R"({"command":"ls"})", true, "file1.txt").allowed());
    }
    CHECK(step(m, "read_file", R"({"path":"file1.txt"})", true, "File content").allowed());
    CHECK(m.on_tool_call_json("execute_bash", R"({"command":"ls"})").action == action::terminate);
  }
  TEST_CASE("test_fail_obs_break_O6_O4 (an observation differs)") {
    ExecutionEconomicsManager m(preset("openhands"));
    const char* ls_out[] = {"file1.txt", "file1.txt (different)", "file1.txt"};
    for (const char* out : ls_out) {
      CHECK(step(m, "read_file", R"({"path":"file1.txt"})", true, "File content").allowed());
      CHECK(step(m, "execute_bash", R"({"command":"ls"})", true, out).allowed());
    }
  }
  TEST_CASE("test_is_stuck_empty_response_loop_with_nudges (headless)") {
    ExecutionEconomicsManager m(preset("openhands"));
    m.on_user_message("Build me an app");
    CHECK(m.on_text("").allowed());
    m.on_user_message("Your last response did not include a function call or a message.");
    CHECK(m.on_text("").allowed());
    m.on_user_message("Your last response did not include a function call or a message.");
    CHECK(m.on_text("").action == action::terminate);
  }
  TEST_CASE("test_is_not_stuck_only_two_empty_responses") {
    ExecutionEconomicsManager m(preset("openhands"));
    m.on_user_message("Hello");
    CHECK(m.on_text("").allowed());
    CHECK(m.on_text("").allowed());
  }
  TEST_CASE("test_is_stuck_whitespace_only_responses") {
    ExecutionEconomicsManager m(preset("openhands"));
    m.on_user_message("Hello");
    CHECK(m.on_text("").allowed());
    CHECK(m.on_text("  ").allowed());
    CHECK(m.on_text("\n").action == action::terminate);
  }
}

TEST_SUITE("preset.openhands-sdk") {
  // OpenHands/software-agent-sdk tests/cross/test_stuck_detector.py.
  TEST_CASE("test_history_too_short") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    m.on_user_message("Hello");
    CHECK(step(m, "terminal", R"({"command":"ls"})", true, "file1.txt\nfile2.txt").allowed());
  }
  TEST_CASE("test_repeating_action_error_nudges_before_stuck") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    m.on_user_message("Please run invalid_command");
    for (int i = 0; i < 2; ++i) {
      CHECK(step(m, "terminal", R"({"command":"invalid_command"})", false,
                 "Command 'invalid_command' not found")
                .allowed());
    }
    const verdict nudge = m.on_tool_call_json("terminal", R"({"command":"invalid_command"})");
    CHECK(nudge.action == action::nudge);
    REQUIRE(fired(nudge, detector_id::similar_args));
    CHECK(nudge.strongest().message.find("terminal") != std::string::npos);
    m.on_tool_result("terminal", false, "Command 'invalid_command' not found");
    CHECK(m.on_tool_call_json("terminal", R"({"command":"invalid_command"})").action ==
          action::terminate);
  }
  // tests/sdk/conversation/local/test_stuck_detector_nudge.py
  TEST_CASE("test_run_nudges_before_going_stuck_on_repeating_action_error") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    m.on_user_message("create the file");
    int nudges = 0;
    bool stuck = false;
    for (int i = 0; i < 4 && !stuck; ++i) {
      const verdict v = m.on_tool_call_json("always_error_tool", R"({"command":"create"})");
      nudges += v.action == action::nudge ? 1 : 0;
      stuck = v.action == action::terminate;
      if (!stuck) {
        m.on_tool_result("always_error_tool", false,
                         "`file_text` is required for command: create.");
      }
    }
    CHECK(nudges == 1);
    CHECK(stuck);
  }
  TEST_CASE("test_run_recovers_after_nudge_when_model_self_corrects") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    m.on_user_message("create the file");
    int nudges = 0;
    for (int i = 0; i < 3; ++i) {
      const verdict v = m.on_tool_call_json("always_error_tool", R"({"command":"create"})");
      nudges += v.action == action::nudge ? 1 : 0;
      m.on_tool_result("always_error_tool", false, "`file_text` is required for command: create.");
    }
    CHECK(nudges == 1);
    CHECK(
        m.on_text("I cannot create the file without its content; here is what I found.").allowed());
  }
  TEST_CASE("test_reset_after_user_message") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    m.on_user_message("Please run ls");
    for (int i = 0; i < 3; ++i) step(m, "terminal", R"({"command":"ls"})", true, "file1.txt");
    CHECK(m.on_user_message("Try something else").allowed());
    CHECK(step(m, "terminal", R"({"command":"pwd"})", true, "/home/user").allowed());
    for (int i = 0; i < 2; ++i)
      CHECK(step(m, "terminal", R"({"command":"ls"})", true, "file1.txt").allowed());
  }
  TEST_CASE("test_is_stuck_uses_only_recent_event_window") {
    ExecutionEconomicsManager m(preset("openhands-sdk"));
    for (int i = 0; i < 50; ++i) m.on_user_message("old message " + std::to_string(i));
    m.on_user_message("start");
    for (int i = 0; i < 3; ++i) step(m, "terminal", R"({"command":"ls"})", true, "file1.txt");
    CHECK(m.on_tool_call_json("terminal", R"({"command":"ls"})").action == action::terminate);
  }
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
  TEST_CASE("produces deterministic hashes regardless of key order") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 5; ++i) {
      m.on_tool_call_json("tool", R"({"a":1,"b":2})");
      m.on_tool_call_json("tool", R"({"b":2,"a":1})");
    }
    CHECK(fired(m.on_tool_call_json("tool", R"({"a":1,"b":2})"), detector_id::exact));
  }
  TEST_CASE("maintains sliding window of last N calls") {
    // Ten repeats, then thirty other calls: the repeats have left the window of 30.
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 10; ++i) m.on_tool_call_json("read", R"({"path":"/same.txt"})");
    for (int i = 0; i < 30; ++i)
      m.on_tool_call_json("tool", R"({"iteration":)" + std::to_string(i) + "}");
    CHECK(m.on_tool_call_json("read", R"({"path":"/same.txt"})").allowed());
  }
  TEST_CASE("blocks any tool with global no-progress breaker at 30") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 30; ++i) {
      const verdict v = m.on_tool_call_json("read", R"({"path":"/same.txt"})");
      if (v.action != action::reject) m.on_tool_result("read", true, "same output");
    }
    const verdict v = m.on_tool_call_json("read", R"({"path":"/same.txt"})");
    CHECK(v.action == action::reject);
    CHECK(v.level == severity::critical);
  }
  TEST_CASE("does not block generic repeats whose outcomes progress") {
    // generic_repeat blocks only a no-progress streak: the same call with new output each time
    // warns (it is among the last 30 ten times) but is never blocked.
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 25; ++i) {
      const verdict v = m.on_tool_call_json("read", R"({"path":"/log.txt"})");
      CHECK(v.action != action::reject);
      if (i >= 10) CHECK(v.level == severity::warn);
      m.on_tool_result("read", true, "line " + std::to_string(i));
    }
  }
  TEST_CASE("warns for known polling no-progress loops") {
    ExecutionEconomicsManager m(preset("openclaw"));
    const char* poll = R"({"action":"poll","sessionId":"sess-1"})";
    for (int i = 0; i < 10; ++i)
      step(m, "process", poll, true, "(no new output)\n\nProcess still running.");
    const verdict v = m.on_tool_call_json("process", poll);
    CHECK(v.level == severity::warn);
    CHECK(fired(v, detector_id::exact));
  }
  TEST_CASE("blocks known polling no-progress loops at critical threshold") {
    ExecutionEconomicsManager m(preset("openclaw"));
    const char* poll = R"({"action":"poll","sessionId":"sess-1"})";
    for (int i = 0; i < 20; ++i)
      step(m, "process", poll, true, "(no new output)\n\nProcess still running.");
    CHECK(m.on_tool_call_json("process", poll).action == action::reject);
  }
  TEST_CASE("does not block known polling when output progresses") {
    ExecutionEconomicsManager m(preset("openclaw"));
    const char* poll = R"({"action":"poll","sessionId":"sess-1"})";
    for (int i = 0; i < 25; ++i) {
      CHECK(m.on_tool_call_json("process", poll).allowed());
      m.on_tool_result("process", true, "line " + std::to_string(i));
    }
  }
  TEST_CASE("blocks ping-pong alternating patterns at critical threshold") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 19; ++i) {
      if (i % 2 == 0) {
        step(m, "read", R"({"path":"/a.txt"})", true, "read stable");
      } else {
        step(m, "list", R"({"dir":"/workspace"})", true, "list stable");
      }
    }
    const verdict v = m.on_tool_call_json("list", R"({"dir":"/workspace"})");
    REQUIRE(fired(v, detector_id::cycle));
    CHECK(v.level == severity::critical);
    CHECK(v.action == action::reject);
  }
  TEST_CASE("does not block ping-pong alternating patterns when outcomes are progressing") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 19; ++i) {
      if (i % 2 == 0) {
        step(m, "read", R"({"path":"/a.txt"})", true, "read " + std::to_string(i));
      } else {
        step(m, "list", R"({"dir":"/workspace"})", true, "list " + std::to_string(i));
      }
    }
    const verdict v = m.on_tool_call_json("list", R"({"dir":"/workspace"})");
    REQUIRE(fired(v, detector_id::cycle));
    CHECK(v.level == severity::warn);
    CHECK(v.action != action::reject);
  }
  TEST_CASE("blocks repeated unknown-tool failures even when the args keep changing") {
    ExecutionEconomicsManager m(preset("openclaw"));
    verdict v;
    for (int i = 0; i < 10; ++i) {
      m.on_tool_call_json("exec", R"({"command":"echo )" + std::to_string(i) + "\"}");
      v = m.on_tool_result("exec", false, "Tool exec not found");
      if (i < 9) CHECK_FALSE(fired(v, detector_id::result));
    }
    REQUIRE(fired(v, detector_id::result));
    CHECK(v.level == severity::critical);
  }
  TEST_CASE("does not block repeated unknown-tool failures before the unknown-tool threshold") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 9; ++i) {
      m.on_tool_call_json("exec", R"({"command":"echo )" + std::to_string(i) + "\"}");
      CHECK(m.on_tool_result("exec", false, "Tool exec not found").allowed());
    }
    CHECK(m.on_tool_call_json("exec", R"({"command":"echo still looping"})").allowed());
  }
  TEST_CASE("other repeated errors are not unknown-tool failures") {
    ExecutionEconomicsManager m(preset("openclaw"));
    for (int i = 0; i < 15; ++i) {
      m.on_tool_call_json("exec", R"({"command":"echo )" + std::to_string(i) + "\"}");
      CHECK(m.on_tool_result("exec", false, "permission denied").allowed());
    }
  }
  TEST_CASE("blocks repeated completed exec calls despite volatile runtime details") {
    ExecutionEconomicsManager m(preset("openclaw"));
    const char* call = R"({"command":"grafana-api.sh datasources"})";
    const auto details = [](int i) {
      return R"({"status":"completed","exitCode":0,"durationMs":)" + std::to_string(100 + i) +
             R"(,"cwd":"/tmp/run-)" + std::to_string(i) + R"(","aggregated":"Loki\nPrometheus"})";
    };
    for (int i = 0; i < 20; ++i) step(m, "exec", call, true, details(i));
    CHECK(m.on_tool_call_json("exec", call).action == action::reject);
  }
  TEST_CASE("exec results whose output changes are progress") {
    ExecutionEconomicsManager m(preset("openclaw"));
    const char* call = R"({"command":"tail -n1 build.log"})";
    for (int i = 0; i < 20; ++i) {
      step(m, "exec", call, true,
           R"({"status":"completed","exitCode":0,"durationMs":7,"aggregated":"step )" +
               std::to_string(i) + R"("})");
    }
    CHECK(m.on_tool_call_json("exec", call).action != action::reject);
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
