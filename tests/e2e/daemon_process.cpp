#include "daemon_process.hpp"

#include <algorithm>

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>

#include "child_process.hpp"

namespace loopguard::test {

daemon_process::daemon_process(const std::string& dir, const std::string& db,
                               std::vector<std::string> extra, daemon_launch how) {
  static std::atomic<int> counter{0};
  const std::string tag = std::to_string(counter++);
  log_path_ = dir + "/loopguardd-" + tag + ".log";
  const std::string port_file = dir + "/port-" + tag;
  std::vector<std::string> args{"--db", db, "--port-file", port_file};
  const auto given = [&](const char* flag) {
    return std::find(extra.begin(), extra.end(), flag) != extra.end();
  };
  // A restart on the port of an earlier daemon passes its own --listen; a test of the commit
  // timing its own --checkpoint-interval.
  if (!given("--checkpoint-interval")) args.insert(args.end(), {"--checkpoint-interval", "10"});
  if (!given("--listen")) args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  args.insert(args.end(), extra.begin(), extra.end());
  std::string program = LOOPGUARDD_PATH;
  if (!how.launcher.empty()) {
    args.insert(args.begin(), program);
    args.insert(args.begin(), how.launcher.begin() + 1, how.launcher.end());
    program = how.launcher.front();
  }
  pid_ = spawn_child(program, args, {log_path_, log_path_, true, {}, how.open_files});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(port_file);
    unsigned p = 0;
    if (in >> p && p > 0) {
      port_ = static_cast<unsigned short>(p);
      return;
    }
    if (wait_child(pid_, std::chrono::milliseconds(0))) {  // exited early
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

daemon_process::~daemon_process() {
  if (pid_ <= 0) return;
  finish_child(pid_, std::chrono::milliseconds(0));
}

void daemon_process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> daemon_process::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  auto r = wait_child(pid_, timeout);
  if (r) pid_ = -1;
  return r;
}

std::string daemon_process::log() const {
  return slurp(log_path_);
}

int run_loopguardd(const std::string& dir, std::vector<std::string> args, std::string& output,
                   std::chrono::milliseconds timeout,
                   std::vector<std::pair<std::string, std::string>> env) {
  const std::string log = dir + "/run.log";
  std::remove(log.c_str());
  const int code = finish_child(
      spawn_child(LOOPGUARDD_PATH, std::move(args), {log, log, false, std::move(env)}), timeout);
  output = slurp(log);
  return code;
}

}  // namespace loopguard::test
