#include "service/worker_modes.hpp"

namespace loopguard::daemon {

void worker_modes::set(const std::string& swarm, const std::string& worker, bool observing) {
  std::lock_guard lock(mu_);
  if (observing) {
    if (size_ >= kMaxWorkers) return;
    if (by_swarm_[swarm].insert(worker).second) ++size_;
    return;
  }
  const auto it = by_swarm_.find(swarm);
  if (it == by_swarm_.end()) return;
  size_ -= it->second.erase(worker);
  if (it->second.empty()) by_swarm_.erase(it);
}

std::set<std::string, std::less<>> worker_modes::observing(std::string_view swarm) const {
  std::lock_guard lock(mu_);
  const auto it = by_swarm_.find(swarm);
  return it == by_swarm_.end() ? std::set<std::string, std::less<>>{} : it->second;
}

std::size_t worker_modes::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

}  // namespace loopguard::daemon
