#include "service/local_detections.hpp"

#include <limits>

#include "loopguard/utf8.hpp"

namespace loopguard::daemon {
namespace {

std::size_t level_index(severity level) {
  switch (level) {
    case severity::critical:
      return 1;
    case severity::terminate:
      return 2;
    default:  // warn (the parser accepts no other level)
      return 0;
  }
}

// The counts of `detector`, or of "other" once the worker has kMaxDetectors names.
std::array<std::uint64_t, 3>& counts_of(local_detections::worker_view& w,
                                        const std::string& detector) {
  if (auto it = w.counts.find(detector); it != w.counts.end()) return it->second;
  if (w.counts.size() < local_detections::kMaxDetectors) return w.counts[detector];
  return w.counts[std::string(local_detections::kOtherDetector)];
}

}  // namespace

void local_detections::add(const std::string& swarm, const std::string& worker,
                           protocol::detection d) {
  d.message.resize(utf8::cut_point(d.message, kMaxMessageBytes));
  std::lock_guard lock(mu_);
  auto [log, inserted] = swarms_[swarm].try_emplace(worker);
  worker_view& w = log->second.view;
  if (inserted) {
    w.name = worker;
    ++workers_;
  }
  log->second.stamp = ++stamp_;
  ++w.total;
  ++counts_of(w, d.detector)[level_index(d.level)];
  if (w.last.size() == kKept) w.last.erase(w.last.begin());
  w.last.push_back(std::move(d));
  if (workers_ > kMaxWorkers) evict_oldest();
}

void local_detections::evict_oldest() {
  auto oldest_swarm = swarms_.end();
  swarm_log::iterator oldest;
  std::uint64_t stamp = std::numeric_limits<std::uint64_t>::max();
  for (auto s = swarms_.begin(); s != swarms_.end(); ++s) {
    for (auto w = s->second.begin(); w != s->second.end(); ++w) {
      if (w->second.stamp < stamp) {
        stamp = w->second.stamp;
        oldest_swarm = s;
        oldest = w;
      }
    }
  }
  if (oldest_swarm == swarms_.end()) return;
  oldest_swarm->second.erase(oldest);
  if (oldest_swarm->second.empty()) swarms_.erase(oldest_swarm);
  --workers_;
}

void local_detections::forget(std::string_view swarm) {
  std::lock_guard lock(mu_);
  const auto it = swarms_.find(swarm);
  if (it == swarms_.end()) return;
  workers_ -= it->second.size();
  swarms_.erase(it);
}

std::vector<local_detections::worker_view> local_detections::of_swarm(
    std::string_view swarm) const {
  std::lock_guard lock(mu_);
  std::vector<worker_view> out;
  const auto it = swarms_.find(swarm);
  if (it == swarms_.end()) return out;
  for (const auto& [name, log] : it->second) out.push_back(log.view);  // map: sorted
  return out;
}

std::size_t local_detections::workers() const {
  std::lock_guard lock(mu_);
  return workers_;
}

}  // namespace loopguard::daemon
