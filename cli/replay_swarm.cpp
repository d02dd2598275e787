#include "replay_swarm.hpp"

#include "judged_calls.hpp"
#include "loopguard/swarm_detection.hpp"
#include "state/shared_economics_state.hpp"

namespace loopguard::cli {
namespace {

daemon::swarm_rules rules_of(const manager_config& config) {
  // validate() has run: an error here cannot happen.
  auto rules = daemon::parse_swarm_rules(config.swarm);
  return rules ? *rules : daemon::swarm_rules{};
}

}  // namespace

struct swarm_replay::impl {
  impl(const manager_config& config, const trace& t)
      : tr(t), calls(t, config.fingerprint), state(rules_of(config)) {}

  const trace& tr;
  judged_calls calls;
  daemon::shared_economics_state state;
};

swarm_replay::swarm_replay(const manager_config& config, const trace& tr)
    : impl_(std::make_unique<impl>(config, tr)) {}
swarm_replay::~swarm_replay() = default;

swarm_replay::step swarm_replay::on_event(std::size_t index) {
  const auto judged = impl_->calls.at(index);
  if (!judged) return {};
  const trace_event& call = impl_->tr.events[judged->call];
  daemon::swarm_event e;
  e.swarm = call.swarm;
  e.worker = call.worker;
  daemon::assign(e, judged->event);
  step out;
  for (const auto& v : impl_->state.apply(e)) {
    auto& to = v.level == severity::none ? out.lifted : out.detections;
    to.push_back(swarm_detection(v, judged->call));
  }
  return out;
}

status swarm_replay::validate(const manager_config& config) {
  auto rules = daemon::parse_swarm_rules(config.swarm);  // validates
  return rules ? status() : rules.error();
}

}  // namespace loopguard::cli
