// Helpers shared by the daemon tests: a temporary directory removed at scope exit, and event
// builders.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "loopguard/protocol.hpp"
#include "state/shared_economics_state.hpp"

namespace loopguard::test {

class temp_dir {
 public:
  temp_dir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("loopguard-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// "w" + i, spelled so GCC 12 does not raise its false -Wrestrict on operator+(const char*, string).
inline std::string worker_name(long i) {
  std::string s = "w";
  s += std::to_string(i);
  return s;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline protocol::event wire_event(std::uint64_t seq, std::uint64_t fp, double t,
                                  std::optional<std::uint64_t> result = 7) {
  protocol::event e;
  e.seq = seq;
  e.tool = "search";
  e.summary = "query=q" + std::to_string(fp);
  e.exact = fp;
  e.structural = fp + 1000000;
  e.result = result;
  e.t = t;
  return e;
}

}  // namespace loopguard::test
