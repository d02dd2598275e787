// Hostile and unusual text through the manager: whatever bytes come in, every message that goes
// out is valid UTF-8, and the same bytes give the same fingerprints as replay computes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/presets.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/trace_feed.hpp"
#include "loopguard/utf8.hpp"
#include "sdk_test_util.hpp"
#include "state/shared_economics_state.hpp"

using namespace loopguard;
using lgtest::fired;

namespace {

void check_valid(const verdict& v) {
  for (const auto& d : v.detections) {
    CAPTURE(d.message);
    CHECK(utf8::is_valid(d.message));
    CHECK(utf8::is_valid(d.suggestion));
    CHECK(utf8::is_valid(d.tool));
  }
}

// Text that repeats a passage of `unit` until the content rule must fire.
std::string repeated(const std::string& unit, int times) {
  std::string s = "Here it is:\n";
  for (int i = 0; i < times; ++i) s += unit;
  return s;
}

}  // namespace

TEST_SUITE("hostile_input") {
  TEST_CASE("regression: a quoted repeating passage of box-drawing characters stays valid UTF-8") {
    for (const auto& unit : {std::string("│ ╔═══╗ table ─┼─ │ status ║\n"),
                             std::string("e\xCC\x81\xCC\x81 caf\xC3\xA9 \xF0\x9F\x98\x80 ok\n"),
                             std::string("\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97\xE7\xAC\xA6 \n")}) {
      for (std::size_t shift = 0; shift < 4; ++shift) {
        // Shifting the start moves where the detector's chunk boundaries fall in the text.
        ExecutionEconomicsManager m;
        const auto v = m.on_text(std::string(shift, 'x') + repeated(unit, 40));
        CHECK(fired(v, detector_id::content));
        check_valid(v);
      }
    }
  }

  TEST_CASE("a stream cut inside characters is judged as one cut between characters") {
    const std::string text = repeated("│ ╔═══╗ ─┼─ │ ✓ done ✗ \xF0\x9F\x98\x80\n", 30);
    ExecutionEconomicsManager by_char, by_byte;
    std::vector<std::string> a, b;
    for (std::size_t i = 0; i < text.size();) {
      std::size_t n = 1;
      while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
      for (const auto& d : by_char.on_text_chunk(text.substr(i, n)).detections)
        a.push_back(d.message);
      i += n;
    }
    for (char c : text) {
      const auto v = by_byte.on_text_chunk(std::string_view(&c, 1));
      check_valid(v);
      for (const auto& d : v.detections) b.push_back(d.message);
    }
    REQUIRE_FALSE(a.empty());
    CHECK(a == b);
    CHECK(b.front().find("\xEF\xBF\xBD") == std::string::npos);
  }

  TEST_CASE("invalid bytes in tool names, ids, outputs and text reach every rule as U+FFFD") {
    for (const auto name : preset_names()) {
      CAPTURE(name);
      ExecutionEconomicsManager m(*preset(name));
      for (int i = 0; i < 12; ++i) {
        check_valid(m.on_tool_call_json("bash\xff", R"({"command":"cat \udcff\u00e9"})", "id\xfe"));
        check_valid(m.on_tool_result("bash\xff", false, "error: \xc3 invalid \xe2\x82", "id\xfe"));
        check_valid(m.on_tool_call("run_tests\xc0", {{"k\xff", "v\xfe"}}));
        check_valid(m.on_tool_result("run_tests\xc0", false, "FAILED \xed\xa0\x80 1 failed"));
        check_valid(m.on_text("same words \xff again and \xf4\x90\x80\x80 again"));
        check_valid(m.on_text_chunk("\xe2\x94"));
      }
      CHECK(m.stats().checks > 0);
    }
  }

  TEST_CASE("every local detector's message stays valid UTF-8 with multi-byte and invalid input") {
    std::set<detector_id> seen;
    for (const auto name : {"aggressive", "balanced"}) {
      ExecutionEconomicsManager m(*preset(name));
      const auto note = [&](const verdict& v) {
        check_valid(v);
        for (const auto& d : v.detections) seen.insert(d.detector);
      };
      const std::string bad =
          "r\xC3\xA9sum\xC3\xA9\xff\xcc\x81\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB";
      for (int i = 0; i < 6; ++i) {  // exact, result
        note(m.on_tool_call_json("read_" + bad, R"({"path":"\udcff/é"})"));
        note(m.on_tool_result("read_" + bad, false, "error: " + bad));
      }
      for (int i = 0; i < 6; ++i) {  // structural
        note(m.on_tool_call_json(
            "grep" + bad, "{\"pattern\":\"x\",\"flags\":\"-" + std::to_string(i) + bad + "\"}"));
        note(m.on_tool_result("grep" + bad, true, "no match"));
      }
      for (int i = 0; i < 8; ++i) {  // cycle
        note(m.on_tool_call_json(i % 2 ? "view_" + bad : "edit_" + bad, R"({"path":"ü.py"})"));
        note(m.on_tool_result(i % 2 ? "view_" + bad : "edit_" + bad, true, "ok ✓"));
      }
      for (int i = 0; i < 6; ++i) {  // similar_args
        note(m.on_tool_call_json(
            "search", "{\"query\":\"naïve café " + bad + " v" + std::to_string(i) + "\"}"));
        note(m.on_tool_result("search", false, "0 résultats " + bad));
      }
      for (int i = 0; i < 6; ++i) {  // test_fix, bash_cascade
        note(m.on_tool_call_json("bash", "{\"command\":\"pytest tests/" + bad + "\"}"));
        note(m.on_tool_result("bash", false, "FAILED tests/" + bad + " 1 failed"));
      }
      for (int i = 0; i < 6; ++i) {  // the same through a json built in code (raw bytes kept)
        note(m.on_tool_call("bash", nlohmann::json{{"command", "cat\xedm\x80 " + bad}}));
        note(m.on_tool_result("bash", false, "cat: no such file"));
      }
      for (int i = 0; i < 6; ++i) {  // retrace: one long output through different calls
        note(m.on_tool_call_json("goto_" + bad, "{\"line\":" + std::to_string(i) + "}"));
        note(m.on_tool_result("goto_" + bad, true, repeated("│ " + bad + " ü\n", 20)));
      }
      for (int i = 0; i < 6; ++i) {  // output_similarity, summary, content
        note(m.on_text("Résumé ✓: the table │ ╔═══╗ │ is unchanged " + bad + " " +
                       std::to_string(i % 2)));
      }
      note(m.on_text(repeated("│ ╔═══╗ ─┼─ │ " + bad + "\n", 40)));
      for (int i = 0; i < 400; ++i) note(m.on_text_chunk("\xe2\x94"));  // turns the limits see
      note(m.add_cost(1e9));
    }
    for (auto d : {detector_id::exact, detector_id::structural, detector_id::cycle,
                   detector_id::similar_args, detector_id::result, detector_id::output_similarity,
                   detector_id::content, detector_id::summary, detector_id::test_fix,
                   detector_id::bash_cascade, detector_id::retrace}) {
      CAPTURE(to_string(d));
      CHECK(seen.count(d) == 1);
    }
  }

  TEST_CASE("regression (fuzz): costs and clock jumps beyond uint32_t or not finite are no UB") {
    for (const auto name : {"attocode", "ralph"}) {
      CAPTURE(name);
      for (double amount : {1e300, 5e9, -1.0, std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity()}) {
        ExecutionEconomicsManager m(*preset(name));
        check_valid(m.add_cost(amount));
        check_valid(m.add_cost(0.5));
      }
      ExecutionEconomicsManager m(*preset(name));
      double now = 0;
      m.set_clock([&] { return now; });
      check_valid(m.on_tool_call_json("t", "{}"));
      now = 1e12;  // a clock that jumps by 2^32 s and more
      const auto v = m.on_tool_call_json("t", "{}");
      check_valid(v);
    }
    ExecutionEconomicsManager m(*preset("attocode"));  // max_cost 1
    m.add_cost(std::numeric_limits<double>::quiet_NaN());
    m.add_cost(-5);
    CHECK_FALSE(fired(m.add_cost(0.1), detector_id::limit));
    CHECK(fired(m.add_cost(1.0), detector_id::limit));
  }

  TEST_CASE("the same bytes give the same verdicts through on_tool_call_json and a repaired copy") {
    ExecutionEconomicsManager a, b;
    for (int i = 0; i < 6; ++i) {
      const auto va = a.on_tool_call_json("grep\xff", "{\"pattern\":\"caf\xc3\"}");
      const auto vb = b.on_tool_call_json("grep\xEF\xBF\xBD", "{\"pattern\":\"caf\xEF\xBF\xBD\"}");
      CHECK(va.action == vb.action);
      CHECK(va.detections.size() == vb.detections.size());
    }
  }

  TEST_CASE("every message is valid UTF-8 over the whole tests/data corpus under every preset") {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(LOOPGUARD_TEST_DATA_DIR)) {
      if (e.path().extension() == ".jsonl") files.push_back(e.path());
    }
    REQUIRE(files.size() > 10);
    std::size_t detections = 0, verdicts = 0;
    for (const auto name : preset_names()) {
      for (const auto& path : files) {
        std::ifstream in(path, std::ios::binary);
        const auto read_back = read_trace(in);
        if (!read_back) continue;  // the corpus holds deliberately bad files too
        const trace& t = *read_back;
        CAPTURE(path.string());
        CAPTURE(name);
        std::map<std::string, ExecutionEconomicsManager> workers;
        daemon::shared_economics_state swarm(daemon::swarm_rules{.threshold = 3});
        for (const auto& ev : t.events) {
          auto [it, fresh] = workers.try_emplace(ev.swarm + "/" + ev.worker, *preset(name));
          auto& m = it->second;
          const verdict v = feed(m, ev);
          if (ev.kind == event_kind::tool_call) {
            const auto fp = fingerprinter().of_call(ev.tool, ev.args);
            for (const auto& g :
                 swarm.apply({ev.swarm, ev.worker, ev.tool, fp.normalized, fp.exact, fp.structural,
                              std::nullopt, true, ev.t.value_or(0)})) {
              ++verdicts;
              CHECK(utf8::is_valid(g.message));
              m.on_swarm_verdict(g);  // the next verdict carries it: checked below
            }
          }
          detections += v.detections.size();
          check_valid(v);
        }
      }
    }
    CHECK(detections > 100);
    CHECK(verdicts > 0);
  }
}
