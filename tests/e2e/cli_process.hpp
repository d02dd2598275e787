// Runs the built `loopguard` command for a test: fork/exec, stdout and stderr to files of
// their own, killed with SIGKILL when it outlives its timeout (and when the test process dies:
// PR_SET_PDEATHSIG), always reaped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace loopguard::test {

struct cli_result {
  int exit = -1;  // the exit code; 128 + signal when killed
  std::string out, err;
};

class cli_process {
 public:
  // Starts `loopguard args...`; its output goes to files under `dir`.
  cli_process(const std::string& dir, std::vector<std::string> args);
  ~cli_process();  // kills it when it still runs
  cli_process(const cli_process&) = delete;
  cli_process& operator=(const cli_process&) = delete;

  // Waits for the exit (SIGKILL after `timeout`) and reads the output.
  cli_result finish(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
};

// Runs `loopguard args...` to completion.
cli_result run_loopguard(const std::string& dir, std::vector<std::string> args,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The lines of `text`, without their '\n' (a last line without one included).
std::vector<std::string> lines_of(const std::string& text);

}  // namespace loopguard::test
