#include "trace_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace loopguard::cli {

std::optional<std::string> load_trace(const std::string& path, trace& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open: " + std::strerror(errno);
  if (auto err = read_trace(in, out)) {
    return path + ":" + std::to_string(err->line) + ": " + err->message;
  }
  return std::nullopt;
}

}  // namespace loopguard::cli
