#include "cli_process.hpp"

#include <signal.h>

#include <atomic>

#include "child_process.hpp"

namespace loopguard::test {

cli_process::cli_process(const std::string& dir, std::vector<std::string> args) {
  static std::atomic<int> counter{0};
  const std::string tag = std::to_string(counter++);
  out_path_ = dir + "/loopguard-" + tag + ".out";
  err_path_ = dir + "/loopguard-" + tag + ".err";
  pid_ = spawn_child(LOOPGUARD_CLI_PATH, std::move(args), {out_path_, err_path_});
}

cli_process::~cli_process() {
  if (pid_ <= 0) return;
  finish_child(pid_, std::chrono::milliseconds(0));
}

cli_result cli_process::finish(std::chrono::milliseconds timeout) {
  cli_result r;
  r.exit = finish_child(pid_, timeout);
  pid_ = -1;
  r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

cli_result run_loopguard(const std::string& dir, std::vector<std::string> args,
                         std::chrono::milliseconds timeout) {
  return cli_process(dir, std::move(args)).finish(timeout);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(text.substr(start, nl - start));
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

}  // namespace loopguard::test
