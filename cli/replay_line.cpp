#include "replay_line.hpp"

#include "loopguard/canonical_json.hpp"
#include "loopguard/detection_line.hpp"

namespace loopguard::cli {
namespace {

// The line's JSON object without its closing brace.
std::string open_line(const std::string& file, const replay_line& l) {
  return open_detection_line(file, l.event, l.worker, l.swarm, l.det);
}

}  // namespace

std::string to_line(const std::string& file, const replay_line& l) {
  return open_line(file, l) + "}\n";
}

std::string delivery_lines(const std::string& file, const replay_line& l) {
  if (l.deliveries.empty()) return "";
  const std::string head = open_line(file, l);
  std::string out;
  for (const delivery& d : l.deliveries) {
    out += head + ",\"delivered_to\":";
    append_json_string(out, d.worker);
    out += ",\"delivered_at\":" + (d.at ? std::to_string(*d.at) : std::string("null")) + "}\n";
  }
  return out;
}

}  // namespace loopguard::cli
