#include <algorithm>

#include "server/dashboard_session.hpp"
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

std::size_t server_context::broadcast(std::string_view swarm,
                                      const std::shared_ptr<const std::string>& frame,
                                      const websocket_session* except,
                                      const std::vector<std::string>& only) {
  std::size_t sent = 0;
  for (const auto& w : registry.of_swarm(swarm)) {  // a copy: no lock held while sending
    auto s = w.lock();
    if (!s || s.get() == except) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), s->worker()) == only.end()) continue;
    s->send(frame);
    ++sent;
  }
  return sent;
}

void server_context::on_durable(std::uint64_t epoch) {
  for (const auto& w : registry.all()) {
    if (auto s = w.lock()) s->on_durable(epoch);
  }
}

void server_context::connection_closed() {
  if (--metrics.connections_open == 0 && stopping && on_drained) on_drained();
}

void server_context::add_dashboard(std::weak_ptr<dashboard_session> d) {
  std::lock_guard lock(dashboards_mu_);
  std::erase_if(dashboards_, [](const auto& w) { return w.expired(); });
  dashboards_.push_back(std::move(d));
}

void server_context::close_all() {
  for (const auto& w : registry.all()) {
    if (auto s = w.lock()) s->shut_down();
  }
  std::vector<std::weak_ptr<dashboard_session>> dashboards;
  {
    std::lock_guard lock(dashboards_mu_);
    dashboards = dashboards_;
  }
  for (const auto& w : dashboards) {
    if (auto d = w.lock()) d->shut_down();
  }
}

}  // namespace loopguard::daemon
