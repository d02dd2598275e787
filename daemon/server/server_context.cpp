// server_context's fan-out to the live sessions (server/server_context.hpp): broadcasts, durable
// acknowledgements, closing them all. Apart from session_registry.cpp, which only reads a
// session's worker name, so that what links the registry (the HTTP views, the fuzz harnesses)
// does not link the sessions.
#include <algorithm>

#include "server/dashboard_session.hpp"
#include "server/server_context.hpp"
#include "server/websocket_session.hpp"

namespace loopguard::daemon {

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
  const auto told = ack_waiters.durable(epoch);
  for (const auto& w : told.waiters) {
    if (auto s = w.lock()) s->on_durable(told.epoch);
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
