// Runs the real loopguardd for a test: fork/exec on an ephemeral loopback port (--port-file),
// output to a log file, killed by PID and always reaped. The child also gets SIGKILL if the
// test process dies (PR_SET_PDEATHSIG), so a test killed by ctest's TIMEOUT leaves nothing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loopguard::test {

// How a test's loopguardd is started beyond its flags.
struct daemon_launch {
  unsigned long open_files = 0;  // its RLIMIT_NOFILE (0: the test's own)
  // An absolute program path, then its arguments, that execs loopguardd under the same PID,
  // e.g. nsenter into a mount namespace (tests/e2e/full_disk_test.cpp).
  std::vector<std::string> launcher = {};
};

class daemon_process {
 public:
  // Starts loopguardd with `--listen 127.0.0.1:0 --db <db> --port-file ...` plus `extra` (which
  // may bring its own --listen, e.g. the port of a daemon killed before), and waits until it
  // listens. On failure port() is 0 and log() says why. `how` may limit its descriptors or run it
  // through a launcher.
  daemon_process(const std::string& dir, const std::string& db, std::vector<std::string> extra = {},
                 daemon_launch how = {});
  ~daemon_process();
  daemon_process(const daemon_process&) = delete;
  daemon_process& operator=(const daemon_process&) = delete;

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  void signal(int sig) const;
  // Waits for the exit; the exit code, 128 + signal for a signal, nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  std::string log() const;

 private:
  pid_t pid_ = -1;
  unsigned short port_ = 0;
  std::string log_path_;
};

// Runs loopguardd to completion with `args` (for refusal tests); exit code and output.
// `env`: variables set for it over the test's environment.
int run_loopguardd(const std::string& dir, std::vector<std::string> args, std::string& output,
                   std::chrono::milliseconds timeout,
                   std::vector<std::pair<std::string, std::string>> env = {});

}  // namespace loopguard::test
