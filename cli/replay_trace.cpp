#include "replay_trace.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>

#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/trace_feed.hpp"

namespace loopguard::cli {
namespace {

struct worker_run {
  explicit worker_run(const manager_config& c) : manager(c) {}
  ExecutionEconomicsManager manager;
  std::vector<std::size_t> trace_index;  // manager event index -> trace event index
};

// Every worker's own manager, on the recording's clock.
class local_replay {
 public:
  explicit local_replay(const manager_config& config) : config_(config) {}

  void on_event(const trace_event& ev, std::size_t i, file_result& out) {
    now_ = ev.t.value_or(static_cast<double>(i));
    auto [it, inserted] = runs_.try_emplace({ev.swarm, ev.worker}, config_);
    worker_run& run = it->second;
    if (inserted) run.manager.set_clock([this] { return now_; });
    run.trace_index.push_back(i);
    verdict v = feed(run.manager, ev);
    for (detection& d : v.detections) {
      if (d.loop_start < run.trace_index.size()) d.loop_start = run.trace_index[d.loop_start];
      out.lines.push_back({i, ev.worker, ev.swarm, std::move(d), {}});
    }
    if (v.action == action::terminate) out.terminated = true;
  }

 private:
  const manager_config& config_;
  double now_ = 0;
  std::map<std::pair<std::string, std::string>, worker_run> runs_;
};

}  // namespace

result<file_result> replay_trace(const trace& tr, const manager_config& config,
                                 global_source& globals) {
  file_result out;
  out.events = tr.events.size();
  local_replay local(config);
  for (std::size_t i = 0; i < tr.events.size(); ++i) {
    local.on_event(tr.events[i], i, out);
    if (status s = globals.on_event(i); !s.ok()) return s;
  }
  auto global = globals.finish();
  if (!global) return global.error();
  out.lifted = std::erase_if(*global, [](const replay_line& l) {
    return is_swarm_detector(l.det.detector) && l.det.level == severity::none;
  });
  // Both are in event order; at one event the local lines come first (std::merge is stable).
  std::vector<replay_line> merged;
  merged.reserve(out.lines.size() + global->size());
  std::merge(std::make_move_iterator(out.lines.begin()), std::make_move_iterator(out.lines.end()),
             std::make_move_iterator(global->begin()), std::make_move_iterator(global->end()),
             std::back_inserter(merged),
             [](const replay_line& a, const replay_line& b) { return a.event < b.event; });
  out.lines = std::move(merged);
  return out;
}

}  // namespace loopguard::cli
