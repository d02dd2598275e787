#include "server/fd_limit.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace loopguard::daemon {

std::size_t connections_that_fit(std::uint64_t fd_limit, std::size_t wanted) {
  const std::uint64_t room =
      fd_limit > fd_budget::kReserved + 1 ? fd_limit - fd_budget::kReserved : 1;
  return static_cast<std::size_t>(std::min<std::uint64_t>(wanted, room));
}

fd_budget raise_fd_limit(std::size_t wanted) {
  fd_budget b;
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) != 0) {
    b.max_connections = wanted;  // unknown: keep the configured limit
    return b;
  }
  b.soft_before = l.rlim_cur;
  b.hard = l.rlim_max;
  if (l.rlim_cur < l.rlim_max) {
    rlimit raised = l;
    raised.rlim_cur = l.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) l = raised;
  }
  b.soft = l.rlim_cur;
  b.max_connections =
      l.rlim_cur == RLIM_INFINITY ? wanted : connections_that_fit(l.rlim_cur, wanted);
  return b;
}

}  // namespace loopguard::daemon
