#include "trace_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace loopguard::cli {

result<trace> load_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return status::error(path + ": cannot open: " + std::strerror(errno));
  auto tr = read_trace(in);
  if (!tr) return tr.error().with_context(path + ":");
  return tr;
}

}  // namespace loopguard::cli
