#include "daemon_process.hpp"

#include <algorithm>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

namespace loopguard::test {
namespace {

pid_t spawn(std::vector<std::string> args, const std::string& log_path) {
  args.insert(args.begin(), LOOPGUARDD_PATH);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: only async-signal-safe calls until exec.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
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
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

daemon_process::daemon_process(const std::string& dir, const std::string& db,
                               std::vector<std::string> extra) {
  static std::atomic<int> counter{0};
  const std::string tag = std::to_string(counter++);
  log_path_ = dir + "/loopguardd-" + tag + ".log";
  const std::string port_file = dir + "/port-" + tag;
  std::vector<std::string> args{"--db", db, "--port-file", port_file, "--checkpoint-interval",
                                "10"};
  // A restart on the port of an earlier daemon passes its own --listen.
  if (std::find(extra.begin(), extra.end(), "--listen") == extra.end()) {
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  pid_ = spawn(args, log_path_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(port_file);
    unsigned p = 0;
    if (in >> p && p > 0) {
      port_ = static_cast<unsigned short>(p);
      return;
    }
    if (wait_pid(pid_, std::chrono::milliseconds(0))) {  // exited early
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

daemon_process::~daemon_process() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait_pid(pid_, std::chrono::seconds(10));
}

void daemon_process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> daemon_process::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  auto r = wait_pid(pid_, timeout);
  if (r) pid_ = -1;
  return r;
}

std::string daemon_process::log() const {
  return slurp(log_path_);
}

int run_loopguardd(const std::string& dir, std::vector<std::string> args, std::string& output,
                   std::chrono::milliseconds timeout) {
  const std::string log = dir + "/run.log";
  std::remove(log.c_str());
  const pid_t pid = spawn(std::move(args), log);
  auto r = wait_pid(pid, timeout);
  if (!r) {
    ::kill(pid, SIGKILL);
    r = wait_pid(pid, std::chrono::seconds(10));
  }
  output = slurp(log);
  return r.value_or(-1);
}

}  // namespace loopguard::test
