// The SDK configuration as a user writes it (docs/configuration.md): JSON text read by
// json_input::parse, then parse_config (config.hpp), and its "swarm" object read by
// parse_swarm_rules + validate (swarm_rules.hpp), as `loopguard replay --config` does.
//
// Contract checked: nothing throws; every error is valid UTF-8 and leaves the output untouched;
// an accepted configuration round-trips (parse_config(to_json(c)) gives c back, compared as
// JSON), and a manager built from it judges a few events with valid UTF-8 messages; a valid
// swarm rule drives a shared_economics_state.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "loopguard/config.hpp"
#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/json_input.hpp"
#include "state/shared_economics_state.hpp"
#include "state/swarm_rules.hpp"

namespace {

namespace fuzz = loopguard::fuzz;
namespace daemon = loopguard::daemon;
using loopguard::manager_config;

enum { inputs, json_ok, accepted, managed, swarm_ok, detections, kCounters };
fuzz::counters<kCounters> counters("sdk_config", {"inputs", "json_ok", "accepted", "managed",
                                                  "swarm_ok", "detections"});

void check(const loopguard::verdict& v) {
  for (const auto& d : v.detections) {
    counters.add(detections);
    LG_FUZZ_CHECK(fuzz::valid_utf8(d.message), "detection message is not valid UTF-8");
    LG_FUZZ_CHECK(fuzz::valid_utf8(d.suggestion), "detection suggestion is not valid UTF-8");
    LG_FUZZ_CHECK(fuzz::valid_utf8(d.tool), "detection tool is not valid UTF-8");
  }
}

void drive(const manager_config& config) {
  loopguard::ExecutionEconomicsManager m(config);
  double now = 0;
  m.set_clock([&now] { return now; });
  for (int i = 0; i < 8; ++i) {
    now += 1;
    check(m.on_text("Let me look at the file again."));
    check(m.on_tool_call_json("bash", R"({"command":"cat  ./src/app.ts","timestamp":1})"));
    check(m.on_tool_result("bash", false, "cat: src/app.ts: No such file or directory"));
    check(m.on_tool_call_json("read_file", R"({"path":"src/app.ts"})"));
    check(m.on_tool_result("read_file", true, "export const x = 1;"));
    check(m.add_cost(0.5));
  }
  counters.add(managed);
}

void drive_swarm(const nlohmann::json& swarm) {
  const auto rules = daemon::parse_swarm_rules(swarm);  // validated
  if (!rules) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(rules.error().message()), "swarm rule error is not valid UTF-8");
    return;
  }
  LG_FUZZ_CHECK(daemon::validate(*rules).ok(), "parse_swarm_rules accepted invalid rules");
  counters.add(swarm_ok);
  daemon::shared_economics_state state(*rules);
  daemon::swarm_event e;
  e.swarm = "s";
  e.tool = "search";
  e.exact = 1;
  e.structural = 2;
  e.result = 3;
  e.ok = false;
  for (int i = 0; i < 24; ++i) {
    e.worker = "w" + std::to_string(i % 4);
    e.t = i;
    for (const auto& v : state.apply(e)) {
      LG_FUZZ_CHECK(fuzz::valid_utf8(v.message), "global verdict message is not valid UTF-8");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  const auto text = loopguard::json_input::parse(fuzz::as_view(data, size));
  if (!text) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(text.error().message()), "JSON error is not valid UTF-8");
    return 0;
  }
  counters.add(json_ok);
  const auto& doc = *text;

  const auto parsed = loopguard::parse_config(doc.value);
  if (!parsed) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(parsed.error().message()), "config error is not valid UTF-8");
    return 0;
  }
  counters.add(accepted);
  const manager_config& config = *parsed;

  const nlohmann::json written = loopguard::to_json(config);
  LG_FUZZ_CHECK(fuzz::valid_utf8(loopguard::json_input::dump(written)),
                "to_json output is not valid UTF-8");
  const auto again = loopguard::parse_config(written);
  if (!again) {
    std::fprintf(stderr, "parse_config(to_json(c)): %s\n", again.error().message().c_str());
  }
  LG_FUZZ_CHECK(again.has_value(), "parse_config refuses its own to_json output");
  LG_FUZZ_CHECK(loopguard::to_json(*again) == written, "parse_config(to_json(c)) differs from c");

  drive(config);
  drive_swarm(config.swarm);
  return 0;
}
