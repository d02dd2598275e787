// The local detections workers report (the `detection` message, feature detections): per swarm
// and worker, how many of each detector and level, and the last few. For the API only: nothing
// is counted from them, they live in memory and a restart forgets them (docs/operations.md).
//
// Memory is bounded: kKept detections per worker, messages cut to kMaxMessageBytes, at most
// kMaxDetectors detector names per worker (more count under "other"), at most kMaxWorkers
// workers in all (beyond, the one that reported least recently is forgotten).
//
// Thread-safe: one mutex.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/protocol.hpp"

namespace loopguard::daemon {

class local_detections {
 public:
  static constexpr std::size_t kKept = 20;
  static constexpr std::size_t kMaxWorkers = 1024;
  static constexpr std::size_t kMaxDetectors = 16;
  static constexpr std::size_t kMaxMessageBytes = 512;
  static constexpr std::string_view kOtherDetector = "other";

  // What one worker reported.
  struct worker_view {
    std::string name;
    std::uint64_t total = 0;
    // detector -> count per level: warn, critical, terminate.
    std::map<std::string, std::array<std::uint64_t, 3>, std::less<>> counts;
    std::vector<protocol::detection> last;  // oldest first, at most kKept
  };

  void add(const std::string& swarm, const std::string& worker, protocol::detection d);
  // Forgets every worker of `swarm` (swarm_complete).
  void forget(std::string_view swarm);
  // The workers of `swarm` that reported, sorted by name.
  std::vector<worker_view> of_swarm(std::string_view swarm) const;
  std::size_t workers() const;

 private:
  struct worker_log {
    worker_view view;
    std::uint64_t stamp = 0;  // when it last reported (a counter)
  };
  using swarm_log = std::map<std::string, worker_log, std::less<>>;
  void evict_oldest();  // under mu_

  mutable std::mutex mu_;  // guards everything below
  std::map<std::string, swarm_log, std::less<>> swarms_;
  std::size_t workers_ = 0;
  std::uint64_t stamp_ = 0;
};

}  // namespace loopguard::daemon
