#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

extern char** environ;

namespace loopguard::test {
namespace {

// In the child: async-signal-safe calls only.
void redirect(const char* path, int flags, int target) {
  const int fd = ::open(path, O_WRONLY | O_CREAT | flags, 0644);
  if (fd < 0) return;
  ::dup2(fd, target);
  ::close(fd);
}

}  // namespace

pid_t spawn_child(const std::string& program, std::vector<std::string> args,
                  const child_output& to) {
  std::string path = program;
  std::vector<char*> argv{path.data()};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The environment is built before fork: nothing allocates in the child.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(to.env.begin(), to.env.end(), [&](const auto& v) {
      return entry.starts_with(v.first + "=");
    });
    if (!replaced) env_strings.emplace_back(entry);
  }
  for (const auto& [name, value] : to.env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int flags = to.append ? O_APPEND : O_TRUNC;
  const bool one_file = to.out == to.err;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  if (to.open_files > 0) {
    const rlimit l{to.open_files, to.open_files};
    if (::setrlimit(RLIMIT_NOFILE, &l) != 0) ::_exit(126);
  }
  redirect(to.out.c_str(), flags, 1);
  if (one_file) {
    ::dup2(1, 2);
  } else {
    redirect(to.err.c_str(), flags, 2);
  }
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

std::optional<int> wait_child(pid_t pid, std::chrono::milliseconds timeout) {
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

int finish_child(pid_t pid, std::chrono::milliseconds timeout) {
  if (pid <= 0) return -1;
  auto r = wait_child(pid, timeout);
  if (!r) {
    ::kill(pid, SIGKILL);
    r = wait_child(pid, std::chrono::seconds(10));
  }
  return r.value_or(-1);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace loopguard::test
