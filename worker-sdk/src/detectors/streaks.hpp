// `summary`, `test_fix`, `bash_cascade` and `limit`: counters over the run (text-only turns,
// failing test runs, failing shell commands) and the safety limits.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "finding.hpp"

namespace loopguard::sdk {

// A run of events of one kind; any other event of interest ends it.
struct streak {
  std::uint32_t length = 0;
  std::size_t start = 0;

  void hit(std::size_t event_index) {
    if (length++ == 0) start = event_index;
  }
  void clear() { length = 0; }
};

std::optional<finding> streak_finding(detector_id d, const streak& s, const streak_rule& rule,
                                      std::string tool, std::string detail = {});

// Iterations, wall time, cost and consecutive failures against their limits: a warning once at
// warn_fraction of a limit, then a hard stop when it is reached.
class safety_limits {
 public:
  explicit safety_limits(const limit_rule& rule) : rule_(rule) {}

  struct usage {
    std::uint64_t turns = 0;
    double elapsed = 0;  // seconds since the first event
    double cost = 0;
    std::uint32_t consecutive_failures = 0;
  };
  std::vector<finding> check(const usage& u, std::size_t event_index);
  void reset() { warned_ = {}; }

 private:
  limit_rule rule_;
  std::array<bool, 4> warned_{};
};

}  // namespace loopguard::sdk
