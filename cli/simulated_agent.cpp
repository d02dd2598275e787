#include "simulated_agent.hpp"

#include <array>
#include <string>

#include "loopguard/utf8.hpp"

namespace loopguard::cli {
namespace {

constexpr std::size_t kSummaryBytes = 80;

protocol::event judged(const fingerprinter& fp, const std::string& tool, const nlohmann::json& args,
                       bool ok, const std::string& output, double t) {
  const call_fingerprint c = fp.of_call(tool, args);
  protocol::event e;
  e.tool = tool;
  e.summary = std::string(utf8::cut(c.normalized, kSummaryBytes));
  e.exact = c.exact;
  e.structural = c.structural;
  e.ok = ok;
  e.result = fp.of_result(ok, output);
  e.t = t;
  return e;
}

}  // namespace

protocol::event simulated_agent::event(std::uint64_t step, double t) const {
  return stuck_ && step % 2 == 0 ? dead_end(t) : own_work(step, t);
}

protocol::event simulated_agent::dead_end(double t) const {
  return judged(fp_, "search", {{"query", "where is the legacy config loader defined"}}, false,
                "No results found.", t);
}

protocol::event simulated_agent::own_work(std::uint64_t step, double t) const {
  static const std::array<const char*, 3> kTools = {"read_file", "grep", "edit_file"};
  const std::string path =
      "src/agent" + std::to_string(index_) + "/module" + std::to_string(step) + ".cpp";
  return judged(fp_, kTools[step % kTools.size()], {{"path", path}}, true,
                "contents of " + path + ", revision " + std::to_string(step), t);
}

}  // namespace loopguard::cli
