#include "cli_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace loopguard::test {
namespace {

void redirect(int target, const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ::dup2(fd, target);
  ::close(fd);
}

pid_t spawn(std::vector<std::string> args, const std::string& out, const std::string& err) {
  args.insert(args.begin(), LOOPGUARD_CLI_PATH);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: only async-signal-safe calls until exec.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  redirect(1, out);
  redirect(2, err);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

std::optional<int> wait_pid(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

cli_process::cli_process(const std::string& dir, std::vector<std::string> args) {
  static std::atomic<int> counter{0};
  const std::string tag = std::to_string(counter++);
  out_path_ = dir + "/loopguard-" + tag + ".out";
  err_path_ = dir + "/loopguard-" + tag + ".err";
  pid_ = spawn(std::move(args), out_path_, err_path_);
}

cli_process::~cli_process() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait_pid(pid_, std::chrono::seconds(10));
}

cli_result cli_process::finish(std::chrono::milliseconds timeout) {
  cli_result r;
  auto code = wait_pid(pid_, timeout);
  if (!code) {
    ::kill(pid_, SIGKILL);
    code = wait_pid(pid_, std::chrono::seconds(10));
  }
  pid_ = -1;
  r.exit = code.value_or(-1);
  r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

cli_result run_loopguard(const std::string& dir, std::vector<std::string> args,
                         std::chrono::milliseconds timeout) {
  return cli_process(dir, std::move(args)).finish(timeout);
}

}  // namespace loopguard::test
