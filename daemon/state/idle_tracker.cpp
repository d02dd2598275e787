#include "state/idle_tracker.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace loopguard::daemon {

void retention_changes::merge_newer(retention_changes&& newer) {
  // An identity the newer set drops or writes again overrides this set's line about it.
  std::set<worker_identity> ids;
  for (const auto& x : newer.dropped) ids.insert(x);
  for (const auto& x : newer.seen) ids.insert(x.id);
  std::erase_if(seen, [&](const seen_row& r) { return ids.contains(r.id); });
  std::erase_if(dropped, [&](const worker_identity& r) { return ids.contains(r); });
  std::set<worker_identity> records;
  for (const auto& x : newer.expired) records.insert(x.id);
  for (const auto& x : newer.forgotten) records.insert(x);
  std::erase_if(expired, [&](const expired_row& r) { return records.contains(r.id); });
  std::erase_if(forgotten, [&](const worker_identity& r) { return records.contains(r); });
  std::set<std::string> names;
  for (const auto& x : newer.swarms_dropped) names.insert(x);
  for (const auto& x : newer.swarms_seen) names.insert(x.swarm);
  std::erase_if(swarms_seen, [&](const swarm_seen_row& r) { return names.contains(r.swarm); });
  std::erase_if(swarms_dropped, [&](const std::string& r) { return names.contains(r); });
  const auto append = [](auto& to, auto& from) {
    for (auto& x : from) to.push_back(std::move(x));
  };
  append(dropped, newer.dropped);
  append(seen, newer.seen);
  append(expired, newer.expired);
  append(forgotten, newer.forgotten);
  append(swarms_dropped, newer.swarms_dropped);
  append(swarms_seen, newer.swarms_seen);
}

// Moves `a`'s last activity to `now` (the wall clock may step back: it never moves back) and
// says whether it is due to be written.
void idle_tracker::active(activity& a, bool force, double now, bool& dirty) const {
  a.seen = std::max(a.seen, now);
  if (force || a.seen - a.written >= kSeenResolution) {
    a.written = a.seen;
    dirty = true;
  }
}

bool idle_tracker::attach(const worker_identity& id, double now) {
  if (is_expired(id)) return false;
  bool dirty = false;
  auto& inc = incarnations_[id];
  ++inc.connections;
  active(inc, false, now, dirty);
  if (dirty) dirty_.insert(id);
  dirty = false;
  auto& sw = swarms_[id.swarm];
  ++sw.connections;
  active(sw, false, now, dirty);
  if (dirty) dirty_swarms_.insert(id.swarm);
  return true;
}

void idle_tracker::detach(const worker_identity& id, double now) {
  const auto it = incarnations_.find(id);
  const auto sw = swarms_.find(id.swarm);
  assert(it != incarnations_.end() && it->second.connections > 0);
  assert(sw != swarms_.end() && sw->second.connections > 0);
  if (it == incarnations_.end() || sw == swarms_.end()) return;
  bool dirty = false;
  --it->second.connections;
  active(it->second, true, now, dirty);
  dirty_.insert(id);
  --sw->second.connections;
  active(sw->second, true, now, dirty);
  dirty_swarms_.insert(id.swarm);
}

void idle_tracker::touch(const worker_identity& id, double now) {
  bool dirty = false;
  active(incarnations_[id], false, now, dirty);
  if (dirty) dirty_.insert(id);
  dirty = false;
  active(swarms_[id.swarm], false, now, dirty);
  if (dirty) dirty_swarms_.insert(id.swarm);
}

retention_sweep idle_tracker::sweep(double now, const retention_limits& limits) {
  retention_sweep out;
  const auto idle = [&](const activity& a, double limit) {
    return limit > 0 && a.connections == 0 && now - a.seen >= limit;
  };
  for (auto it = incarnations_.begin(); it != incarnations_.end();) {
    if (!idle(it->second, limits.incarnation_idle)) {
      ++it;
      continue;
    }
    dirty_.erase(it->first);
    pending_.dropped.push_back(it->first);
    out.incarnations.push_back(it->first);
    it = incarnations_.erase(it);
  }
  for (auto it = swarms_.begin(); it != swarms_.end();) {
    if (!idle(it->second, limits.swarm_idle)) {
      ++it;
      continue;
    }
    dirty_swarms_.erase(it->first);
    pending_.swarms_dropped.push_back(it->first);
    out.swarms.push_back(it->first);
    it = swarms_.erase(it);
  }
  if (limits.expired_kept > 0) {
    for (auto it = expired_.begin(); it != expired_.end();) {
      if (now - it->second < limits.expired_kept) {
        ++it;
        continue;
      }
      pending_.forgotten.push_back(it->first);
      ++out.forgotten;
      it = expired_.erase(it);
    }
  }
  return out;
}

void idle_tracker::record_expired(const worker_identity& id, double now) {
  expired_[id] = now;
  pending_.expired.push_back({id, now});
}

retention_changes idle_tracker::take_changes() {
  retention_changes out = std::exchange(pending_, {});
  for (const auto& id : dirty_) out.seen.push_back({id, incarnations_.at(id).seen});
  for (const auto& name : dirty_swarms_) out.swarms_seen.push_back({name, swarms_.at(name).seen});
  dirty_.clear();
  dirty_swarms_.clear();
  return out;
}

void idle_tracker::restore(const std::vector<seen_row>& incarnations,
                           const std::vector<swarm_seen_row>& seen,
                           const std::vector<std::string>& swarms,
                           const std::vector<expired_row>& expired, double now) {
  incarnations_.clear();
  swarms_.clear();
  expired_.clear();
  dirty_.clear();
  dirty_swarms_.clear();
  pending_ = {};
  const auto known = [&](double t) { return t > 0 ? t : now; };
  for (const auto& r : incarnations) {
    auto& a = incarnations_[r.id];
    a.seen = a.written = known(r.seen);
  }
  for (const auto& name : swarms) {
    auto& a = swarms_[name];
    a.seen = a.written = now;
  }
  for (const auto& r : seen) {
    const auto it = swarms_.find(r.swarm);
    if (it != swarms_.end()) {
      it->second.seen = it->second.written = known(r.seen);
    } else {
      pending_.swarms_dropped.push_back(r.swarm);  // completed or expired: nothing to track
    }
  }
  for (const auto& r : expired) expired_[r.id] = r.expired;
}

std::size_t idle_tracker::connected() const {
  return static_cast<std::size_t>(
      std::count_if(incarnations_.begin(), incarnations_.end(),
                    [](const auto& kv) { return kv.second.connections > 0; }));
}

double idle_tracker::seen(const worker_identity& id) const {
  const auto it = incarnations_.find(id);
  return it == incarnations_.end() ? 0 : it->second.seen;
}

double idle_tracker::swarm_seen(std::string_view swarm) const {
  const auto it = swarms_.find(swarm);
  return it == swarms_.end() ? 0 : it->second.seen;
}

std::vector<expired_row> idle_tracker::expired_of(std::string_view swarm) const {
  std::vector<expired_row> out;
  for (const auto& [id, when] : expired_) {
    if (id.swarm == swarm) out.push_back({id, when});
  }
  return out;
}

}  // namespace loopguard::daemon
