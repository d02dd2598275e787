// The events the e2e tests' workers send: worker-independent, fingerprints cycling through `fps`
// values with a fixed result each, so that a swarm's final state (its digest) does not depend on
// how its workers' events interleave, and can be computed offline.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "../daemon/test_util.hpp"
#include "loopguard/daemon_client.hpp"
#include "loopguard/hex.hpp"
#include "state/shared_economics_state.hpp"

namespace loopguard::test {

inline protocol::event cycling_event(std::uint64_t seq, std::uint64_t fps, double t) {
  return wire_event(seq, 1 + seq % fps, t, 1000 + seq % fps);
}
inline protocol::event cycling_event(std::uint64_t seq, std::uint64_t fps) {
  return cycling_event(seq, fps, double(seq));
}

// Sends the client's next `n` events; each must be taken with the next sequence number.
inline void send_cycling(daemon_client& c, std::uint64_t n, std::uint64_t fps) {
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t next = c.stats().sent + 1;
    REQUIRE(c.send(cycling_event(next, fps)) == next);
  }
}

// The digest of `swarm` once workers w0..w(workers-1) each applied events 1..n, as the
// daemon's HTTP API spells it.
inline std::string cycling_digest(const std::string& swarm, int workers, std::uint64_t n,
                                  std::uint64_t fps) {
  daemon::shared_economics_state s;
  for (int w = 0; w < workers; ++w) {
    for (std::uint64_t seq = 1; seq <= n; ++seq) {
      const auto e = cycling_event(seq, fps);
      s.apply(
          {swarm, worker_name(w), e.tool, e.summary, e.exact, e.structural, e.result, e.ok, e.t});
    }
  }
  return to_hex(s.digest(swarm));
}

}  // namespace loopguard::test
