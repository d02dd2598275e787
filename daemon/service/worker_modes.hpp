// The workers that said they observe (hello `mode`: "observe", feature observe): their managers
// only observe, every verdict is allow (docs/configuration.md, "mode"). For the API only: their
// calls count for the swarm rule like any worker's. In memory; a restart forgets them until
// they reconnect (workers reconnect by themselves and say it again in their hello).
//
// Bounded: at most kMaxWorkers observing workers are kept; beyond, a new one is not recorded
// (it is shown as enforcing) until others say hello without observing.
//
// Thread-safe: one mutex.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace loopguard::daemon {

class worker_modes {
 public:
  static constexpr std::size_t kMaxWorkers = 100000;

  // What `worker`'s latest hello said.
  void set(const std::string& swarm, const std::string& worker, bool observing);
  // The observing workers of `swarm`, sorted by name.
  std::set<std::string, std::less<>> observing(std::string_view swarm) const;
  std::size_t size() const;

 private:
  mutable std::mutex mu_;  // guards everything below
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> by_swarm_;
  std::size_t size_ = 0;
};

}  // namespace loopguard::daemon
