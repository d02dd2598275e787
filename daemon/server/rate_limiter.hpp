// A worker's event rate, enforced by back-pressure (docs/operations.md, "Limits"): a token
// bucket of `rate` events per second holding at most `burst`. After each batch the session
// takes its new events from the bucket; when the bucket is in debt, the session stops reading
// that connection for as long as the debt takes to refill, so a worker sending faster simply
// waits (TCP pushes back), and is never closed for speed. Resent events are free (the caller
// takes only the events applied). Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>

namespace loopguard::daemon {

class rate_limiter {
 public:
  using clock = std::chrono::steady_clock;

  rate_limiter(double rate, double burst, clock::time_point now)
      : rate_(rate), burst_(burst), tokens_(burst), last_(now) {}

  // Takes `n` events; how long to stop reading before the next message (zero: go on).
  clock::duration take(std::uint64_t n, clock::time_point now);

 private:
  double rate_, burst_;
  double tokens_;  // may go negative: a debt paid by waiting
  clock::time_point last_;
};

}  // namespace loopguard::daemon
