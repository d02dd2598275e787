// `limit`: iterations, wall time, cost and consecutive failures against their limits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "finding.hpp"

namespace loopguard::sdk {

// A warning once at warn_fraction of a limit, then a hard stop when it is reached.
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
  std::array<bool, 4> warned_{};  // per limit, in the order of usage
};

}  // namespace loopguard::sdk
