#include "global_source.hpp"

#include "replay_swarm.hpp"

namespace loopguard::cli {
namespace {

class offline_source final : public global_source {
 public:
  offline_source(const manager_config& config, const trace& tr) : tr_(tr), swarms_(config, tr) {}

  status on_event(std::size_t index) override {
    const trace_event& ev = tr_.events[index];
    auto step = swarms_.on_event(index);
    // As the daemon sends them: the lifted verdicts first (replay_trace counts them).
    for (auto* list : {&step.lifted, &step.detections}) {
      for (detection& d : *list) lines_.push_back({index, ev.worker, ev.swarm, std::move(d), {}});
    }
    return {};
  }

  result<std::vector<replay_line>> finish() override { return std::move(lines_); }

 private:
  const trace& tr_;
  swarm_replay swarms_;
  std::vector<replay_line> lines_;
};

}  // namespace

std::unique_ptr<global_source> offline_globals(const manager_config& config, const trace& tr) {
  return std::make_unique<offline_source>(config, tr);
}

}  // namespace loopguard::cli
