#include <algorithm>

#include "server/server_context.hpp"
#include "server/websocket_session.hpp"

namespace loopguard::daemon {

void session_registry::add(const std::string& swarm, const websocket_session* key, entry s) {
  std::lock_guard lock(mu_);
  by_swarm_[swarm].emplace_back(key, std::move(s));
}

void session_registry::remove(const std::string& swarm, const websocket_session* key) {
  std::lock_guard lock(mu_);
  const auto it = by_swarm_.find(swarm);
  if (it == by_swarm_.end()) return;
  std::erase_if(it->second, [&](const auto& p) { return p.first == key; });
  if (it->second.empty()) by_swarm_.erase(it);
}

std::vector<session_registry::entry> session_registry::of_swarm(std::string_view swarm) const {
  std::lock_guard lock(mu_);
  std::vector<entry> out;
  const auto it = by_swarm_.find(std::string(swarm));
  if (it != by_swarm_.end()) {
    for (const auto& p : it->second) out.push_back(p.second);
  }
  return out;
}

std::vector<session_registry::entry> session_registry::all() const {
  std::lock_guard lock(mu_);
  std::vector<entry> out;
  for (const auto& [swarm, list] : by_swarm_) {
    for (const auto& p : list) out.push_back(p.second);
  }
  return out;
}

std::vector<std::string> session_registry::connected(std::string_view swarm) const {
  std::vector<std::string> out;
  for (const auto& w : of_swarm(swarm)) {
    if (auto s = w.lock()) out.emplace_back(s->worker());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<std::string, std::size_t, std::less<>> session_registry::connected_counts() const {
  std::map<std::string, std::size_t, std::less<>> out;
  std::vector<std::string> swarms;
  {
    std::lock_guard lock(mu_);
    for (const auto& [swarm, list] : by_swarm_) swarms.push_back(swarm);
  }
  for (const auto& swarm : swarms) {
    const auto n = connected(swarm).size();
    if (n > 0) out.emplace(swarm, n);
  }
  return out;
}

}  // namespace loopguard::daemon
