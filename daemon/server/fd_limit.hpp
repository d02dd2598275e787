// The open-file limit and the connection limit that fits under it (docs/operations.md,
// "Limits"). Every connection holds a descriptor; the database, its journal, the listening
// socket, plain HTTP requests and the live dashboards need some more. A connection limit above
// what the descriptors allow would let accept() fail with EMFILE before any worker is told
// `too_many_connections`, so at start the daemon raises its soft limit to the hard one (as
// Redis does for maxclients) and lowers the connection limit to fit, saying so in the log.
#pragma once

#include <cstddef>
#include <cstdint>

namespace loopguard::daemon {

struct fd_budget {
  static constexpr std::uint64_t kReserved = 128;  // database, log, listener, HTTP, dashboards
  std::uint64_t soft_before = 0, soft = 0, hard = 0;
  std::size_t max_connections = 0;  // what fits, at most the configured limit
  bool raise_failed = false;        // soft was below hard and could not be raised
};

// Pure: the connections that fit under `fd_limit` descriptors (at least 1).
std::size_t connections_that_fit(std::uint64_t fd_limit, std::size_t wanted);

// Raises the process's soft RLIMIT_NOFILE to its hard limit and fits `wanted` under it.
fd_budget raise_fd_limit(std::size_t wanted);

}  // namespace loopguard::daemon
