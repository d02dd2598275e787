#include "server/fd_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>

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
    // An unlimited (or huge) hard limit is above what the kernel allows one process
    // (fs.nr_open): then that is the most the soft limit can be.
    if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      std::uint64_t nr_open = 0;
      std::ifstream("/proc/sys/fs/nr_open") >> nr_open;
      if (nr_open > l.rlim_cur) {
        raised.rlim_cur = std::min<rlim_t>(l.rlim_max, static_cast<rlim_t>(nr_open));
        if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) raised = l;
      } else {
        raised = l;
      }
    }
    b.raise_failed = raised.rlim_cur == l.rlim_cur;
    l = raised;
  }
  b.soft = l.rlim_cur;
  b.max_connections =
      l.rlim_cur == RLIM_INFINITY ? wanted : connections_that_fit(l.rlim_cur, wanted);
  return b;
}

}  // namespace loopguard::daemon
