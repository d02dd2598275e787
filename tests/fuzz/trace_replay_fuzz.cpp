// The input as a recorded run (docs/trace-format.md), replayed as `loopguard replay` does
// (cli/replay_command.cpp): read_trace, one ExecutionEconomicsManager per (swarm, worker) with
// the recording's clock, and the swarm-wide rule through cli/replay_swarm.cpp (compiled in).
//
// Contract checked: nothing throws; a refusal names a line of the input in valid UTF-8; every
// detection's message, suggestion and tool is valid UTF-8; a terminate verdict carries a
// detection. A bad line stops the recording, but the events before it are still replayed, to
// reach the detectors from more inputs.
#include <cstddef>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"
#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/presets.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/trace_feed.hpp"
#include "replay_swarm.hpp"

namespace {

namespace fuzz = loopguard::fuzz;
using loopguard::manager_config;

enum { inputs, parsed, refused, events, detections, global, kCounters };
fuzz::counters<kCounters> counters("trace_replay", {"inputs", "parsed", "refused", "events",
                                                    "detections", "global"});

// balanced with a swarm rule that one worker reaches quickly, and aggressive as shipped.
std::vector<manager_config> make_configs() {
  std::vector<manager_config> out;
  auto balanced = loopguard::preset("balanced");
  auto aggressive = loopguard::preset("aggressive");
  LG_FUZZ_CHECK(balanced && aggressive, "a preset is missing");
  balanced->swarm = {{"threshold", 2}, {"min_workers", 1}, {"absolute_cap", 4}, {"critical_at", 3}};
  out.push_back(*balanced);
  out.push_back(*aggressive);
  for (const auto& c : out) {
    LG_FUZZ_CHECK(loopguard::cli::swarm_replay::validate(c).ok(), "harness swarm rule invalid");
  }
  return out;
}
const std::vector<manager_config> kConfigs = make_configs();

void check(const loopguard::detection& d) {
  counters.add(detections);
  if (d.detector == loopguard::detector_id::global) counters.add(global);
  LG_FUZZ_CHECK(fuzz::valid_utf8(d.message), "detection message is not valid UTF-8");
  LG_FUZZ_CHECK(fuzz::valid_utf8(d.suggestion), "detection suggestion is not valid UTF-8");
  LG_FUZZ_CHECK(fuzz::valid_utf8(d.tool), "detection tool is not valid UTF-8");
}

struct worker_run {
  explicit worker_run(const manager_config& c) : manager(c) {}
  loopguard::ExecutionEconomicsManager manager;
};

void replay(const loopguard::trace& tr, const manager_config& config) {
  std::map<std::pair<std::string, std::string>, worker_run> runs;
  loopguard::cli::swarm_replay swarms(config, tr);
  double now = 0;
  for (std::size_t i = 0; i < tr.events.size(); ++i) {
    const loopguard::trace_event& ev = tr.events[i];
    now = ev.t.value_or(static_cast<double>(i));
    auto [it, inserted] = runs.try_emplace({ev.swarm, ev.worker}, config);
    if (inserted) it->second.manager.set_clock([&now] { return now; });
    const loopguard::verdict v = loopguard::feed(it->second.manager, ev);
    counters.add(events);
    LG_FUZZ_CHECK(v.action != loopguard::action::terminate || !v.detections.empty(),
                  "terminate without a detection");
    for (const auto& d : v.detections) check(d);
    const auto swarm_step = swarms.on_event(i);
    for (const auto& d : swarm_step.detections) check(d);
    for (const auto& v : swarm_step.lifted) {
      LG_FUZZ_CHECK(v.level == loopguard::severity::none, "a lifted verdict has a level");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  std::istringstream in{std::string(fuzz::as_view(data, size))};
  const auto read_back = loopguard::read_trace(in);
  if (!read_back) {
    counters.add(refused);
    const std::string& m = read_back.error().message();
    LG_FUZZ_CHECK(fuzz::valid_utf8(m), "trace error is not valid UTF-8");
    LG_FUZZ_CHECK(!m.empty() && m[0] >= '1' && m[0] <= '9', "trace error names no line");
    return 0;
  }
  counters.add(parsed);
  for (const auto& config : kConfigs) replay(*read_back, config);
  return 0;
}
