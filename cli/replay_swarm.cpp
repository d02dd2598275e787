#include "replay_swarm.hpp"

namespace loopguard::cli {

struct swarm_replay::impl {};

swarm_replay::swarm_replay(const manager_config&) : impl_(std::make_unique<impl>()) {}
swarm_replay::~swarm_replay() = default;

std::vector<detection> swarm_replay::on_event(const trace&, std::size_t, call_pairing&) {
  return {};
}

std::optional<std::string> swarm_replay::validate(const manager_config&) { return std::nullopt; }

}  // namespace loopguard::cli
