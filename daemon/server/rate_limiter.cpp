#include "server/rate_limiter.hpp"

#include <algorithm>

namespace loopguard::daemon {

rate_limiter::clock::duration rate_limiter::take(std::uint64_t n, clock::time_point now) {
  const std::chrono::duration<double> elapsed = now - last_;
  last_ = now;
  tokens_ = std::min(burst_, tokens_ + std::max(0.0, elapsed.count()) * rate_);
  tokens_ -= static_cast<double>(n);
  if (tokens_ >= 0) return clock::duration::zero();
  return std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(-tokens_ / rate_));
}

}  // namespace loopguard::daemon
