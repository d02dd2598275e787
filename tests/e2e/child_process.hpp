// Starting and reaping the programs under test (loopguardd, loopguard) from e2e tests. A child
// dies with the test process (PR_SET_PDEATHSIG) and is always reaped by its PID.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loopguard::test {

struct child_output {
  std::string out, err;  // files; the same path takes both streams
  bool append = false;   // append (a restarted daemon keeps one log) or truncate
  // Variables set in the child's environment over the test's own (NAME, value).
  std::vector<std::pair<std::string, std::string>> env = {};
  unsigned long open_files = 0;  // the child's RLIMIT_NOFILE, soft and hard (0: inherited)
};

// Starts `program` with `args`; -1 when fork failed.
pid_t spawn_child(const std::string& program, std::vector<std::string> args,
                  const child_output& to);
// The exit status (128 + signal when killed), -1 when `pid` is not a child, nullopt on timeout.
std::optional<int> wait_child(pid_t pid, std::chrono::milliseconds timeout);
// Waits up to `timeout`, then SIGKILLs and reaps. The exit status, -1 when unknown.
int finish_child(pid_t pid, std::chrono::milliseconds timeout);
// A whole file ("" when unreadable).
std::string slurp(const std::string& path);

}  // namespace loopguard::test
