#include "replay_line.hpp"

#include <cstdio>

#include "loopguard/canonical_json.hpp"

namespace loopguard::cli {
namespace {

// The line's JSON object without its closing brace.
std::string open_line(const std::string& file, const replay_line& l) {
  std::string out = "{\"trace\":";
  append_json_string(out, file);
  out += ",\"event\":" + std::to_string(l.event) + ",\"worker\":";
  append_json_string(out, l.worker);
  out += ",\"swarm\":";
  append_json_string(out, l.swarm);
  out += ",\"detector\":";
  append_json_string(out, to_string(l.det.detector));
  out += ",\"severity\":";
  append_json_string(out, to_string(l.det.level));
  out += ",\"count\":" + std::to_string(l.det.count) + ",\"message\":";
  append_json_string(out, l.det.message);
  char conf[32];
  std::snprintf(conf, sizeof conf, "%.2f", l.det.confidence);
  out += ",\"confidence\":";
  out += conf;
  out += ",\"loop_start\":" + std::to_string(l.det.loop_start);
  return out;
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
