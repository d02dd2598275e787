// ExecutionEconomicsManager under arbitrary sequences of calls (execution_economics_manager.hpp),
// with arbitrary byte strings (invalid UTF-8 included), under a few presets.
//
// The input is a program: each operation is one byte (op = byte % kOps) followed by its
// operands (fuzz_support.hpp's byte_stream: short strings, so many events fit in one input and
// the detectors fire). One operation repeats the previous one up to 16 times.
//
// Contract checked: nothing throws; every detection's message, suggestion and tool is valid
// UTF-8; a verdict other than allow carries a detection; events() counts every event judged; in
// observe mode (the listed preset when the first byte is 128 or more) every verdict is allow and
// says what enforce would have done.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/presets.hpp"

namespace {

namespace fuzz = loopguard::fuzz;
using loopguard::ExecutionEconomicsManager;
using nlohmann::json;

enum { inputs, events, verdicts, detections, terminated, kCounters };
fuzz::counters<kCounters> counters("manager",
                                   {"inputs", "events", "verdicts", "detections", "terminated"});

constexpr std::string_view kTools[] = {"bash", "read_file", "search", "edit_file", "run_tests"};
constexpr std::string_view kArgs[] = {
    R"({"command":"ls -la"})",          R"({"command":"cat  ./src//a.ts"})",
    R"({"path":"src/a.ts"})",           R"({"query":"config loader"})",
    R"({"command":"pytest -x tests"})", R"({"path":"src/a.ts","content":"x = 1"})",
    R"({"command":"sed -n 1,20p a"})",  R"(not json)"};
constexpr std::string_view kOutputs[] = {"No results found.", "FAILED tests/test_a.py::t - 1 != 2",
                                         "ok", "error: file not found", "took 12ms pid 42"};

// A few presets for every input, and one more chosen by the input's first byte.
const std::vector<std::string_view> kPresetNames = loopguard::preset_names();
constexpr std::string_view kFixedPresets[] = {"balanced", "aggressive", "roo-code"};

json json_from(fuzz::byte_stream& in) {
  switch (in.byte() % 5) {
    case 0:
      return json{{"command", in.str(24)}};
    case 1:
      return json{{"path", in.str(16)}, {"offset", in.byte()}};
    case 2:
      return json::array({in.str(8), in.byte(), nullptr});
    case 3:
      return json{{std::string(in.str(6)), json{{"x", in.str(6)}, {"timestamp", in.byte()}}}};
    default:
      return json(in.str(12));
  }
}

double cost_from(std::uint8_t b) {
  switch (b % 8) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return std::numeric_limits<double>::infinity();
    case 2:
      return -1.0;
    case 3:
      return 1e300;
    default:
      return static_cast<double>(b) / 16.0;
  }
}

void check(const loopguard::verdict& v, bool observe) {
  counters.add(events);
  LG_FUZZ_CHECK(v.would_have.has_value() == observe, "would_have set in enforce mode or missing");
  LG_FUZZ_CHECK(!observe || v.action == loopguard::action::allow, "observe mode did not allow");
  if (v.action == loopguard::action::allow && v.detections.empty()) return;
  counters.add(verdicts);
  LG_FUZZ_CHECK(!v.detections.empty(), "a verdict other than allow without a detection");
  if (v.action == loopguard::action::terminate) counters.add(terminated);
  for (const auto& d : v.detections) {
    counters.add(detections);
    LG_FUZZ_CHECK(fuzz::valid_utf8(d.message), "detection message is not valid UTF-8");
    LG_FUZZ_CHECK(fuzz::valid_utf8(d.suggestion), "detection suggestion is not valid UTF-8");
    LG_FUZZ_CHECK(fuzz::valid_utf8(d.tool), "detection tool is not valid UTF-8");
  }
}

void run(std::string_view program, const loopguard::manager_config& config) {
  ExecutionEconomicsManager m(config);
  double now = 0;
  m.set_clock([&now] { return now; });
  fuzz::byte_stream in(program.substr(program.empty() ? 0 : 1));
  std::function<void()> last = [] {};
  std::size_t judged = 0;  // events since the last reset
  const auto judge = [&](const loopguard::verdict& v) {
    check(v, config.mode == loopguard::guard_mode::observe);
    ++judged;
  };
  constexpr unsigned kOps = 13;
  while (!in.empty()) {
    std::function<void()> op;
    // Operands are read into locals first: the order of lambda init-captures is unspecified.
    switch (in.byte() % kOps) {
      case 0: {
        std::string tool = in.str(8), args = in.str(32);
        op = [&, tool, args] { judge(m.on_tool_call_json(tool, args)); };
        break;
      }
      case 1: {
        std::string tool = in.str(8);
        json args = json_from(in);
        std::string id = in.str(3);
        op = [&, tool, args, id] { judge(m.on_tool_call(tool, args, id)); };
        break;
      }
      case 2: {
        std::string tool = in.str(8);
        const bool ok = (in.byte() & 1) != 0;
        std::string out = in.str(48), id = in.str(3);
        op = [&, tool, ok, out, id] { judge(m.on_tool_result(tool, ok, out, id)); };
        break;
      }
      case 3: {
        std::string text = in.str(64);
        op = [&, text] { judge(m.on_text(text)); };
        break;
      }
      case 4: {
        std::string chunk = in.str(32);
        op = [&, chunk] { judge(m.on_text_chunk(chunk)); };
        break;
      }
      case 5: {
        const double amount = cost_from(in.byte());
        op = [&, amount] { (void)m.add_cost(amount); };
        break;
      }
      case 6:
        op = [&] {
          m.reset();
          judged = 0;
        };
        break;
      case 7: {  // repeat the previous operation
        const unsigned n = 1 + in.byte() % 16u;
        for (unsigned i = 0; i < n; ++i) last();
        continue;
      }
      case 8: {  // a call from the table: repeats and cycles come easily
        const std::uint8_t b = in.byte();
        const std::string_view tool = kTools[b % 5], args = kArgs[(b / 5) % 8];
        op = [&, tool, args] { judge(m.on_tool_call_json(tool, args)); };
        break;
      }
      case 9: {  // a result from the table
        const std::uint8_t b = in.byte();
        const std::string_view tool = kTools[b % 5], out = kOutputs[(b / 5) % 5];
        const bool ok = (b & 0x80) != 0;
        op = [&, tool, ok, out] { judge(m.on_tool_result(tool, ok, out)); };
        break;
      }
      case 10: {  // the clock moves on (seconds, sometimes far)
        const std::uint8_t b = in.byte();
        now += b < 240 ? static_cast<double>(b) : std::ldexp(1.0, b - 200);
        continue;
      }
      case 11: {  // a message from outside the agent, or a resume
        const bool resume = (in.byte() & 1) != 0;
        std::string text = in.str(24);
        op = [&, resume, text] { judge(resume ? m.on_resume() : m.on_user_message(text)); };
        break;
      }
      default: {  // streamed text: the same chunk several times
        std::string chunk = in.str(24);
        const unsigned n = 1 + in.byte() % 32u;
        op = [&, chunk, n] {
          for (unsigned i = 0; i < n; ++i) judge(m.on_text_chunk(chunk));
        };
        break;
      }
    }
    op();
    last = std::move(op);
  }
  // add_cost judges nothing it counts here; every other event is counted by events().
  LG_FUZZ_CHECK(m.events() >= judged, "events() counts fewer events than were judged");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  if (size > 4096) return 0;  // longer programs only slow the search down
  const std::string_view program = fuzz::as_view(data, size);
  for (const auto name : kFixedPresets) {
    const auto config = loopguard::preset(name);
    LG_FUZZ_CHECK(config.has_value(), "a fixed preset is missing");
    run(program, *config);
  }
  if (!program.empty() && !kPresetNames.empty()) {
    const auto first = static_cast<std::uint8_t>(program[0]);
    const auto name = kPresetNames[first % kPresetNames.size()];
    auto config = loopguard::preset(name);
    LG_FUZZ_CHECK(config.has_value(), "a listed preset is missing");
    if (first >= 128) config->mode = loopguard::guard_mode::observe;
    run(program, *config);
  }
  return 0;
}
