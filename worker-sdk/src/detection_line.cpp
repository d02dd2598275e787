#include "loopguard/detection_line.hpp"

#include <cstdio>

#include "loopguard/canonical_json.hpp"

namespace loopguard {

std::string open_detection_line(std::string_view trace, std::size_t event, std::string_view worker,
                                std::string_view swarm, const detection& d) {
  std::string out = "{\"trace\":";
  append_json_string(out, trace);
  out += ",\"event\":" + std::to_string(event) + ",\"worker\":";
  append_json_string(out, worker);
  out += ",\"swarm\":";
  append_json_string(out, swarm);
  out += ",\"detector\":";
  append_json_string(out, to_string(d.detector));
  out += ",\"severity\":";
  append_json_string(out, to_string(d.level));
  out += ",\"count\":" + std::to_string(d.count) + ",\"message\":";
  append_json_string(out, d.message);
  char conf[32];
  std::snprintf(conf, sizeof conf, "%.2f", d.confidence);
  out += ",\"confidence\":";
  out += conf;
  out += ",\"loop_start\":" + std::to_string(d.loop_start);
  return out;
}

std::string detection_line(std::string_view trace, std::size_t event, std::string_view worker,
                           std::string_view swarm, const detection& d) {
  return open_detection_line(trace, event, worker, swarm, d) + "}\n";
}

}  // namespace loopguard
