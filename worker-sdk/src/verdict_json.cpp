#include "loopguard/verdict_json.hpp"

#include <charconv>
#include <cmath>

#include "loopguard/canonical_json.hpp"

namespace loopguard {
namespace {

void append_key(std::string& out, std::string_view key) {
  out += '"';
  out += key;
  out += "\":";
}

void append_uint(std::string& out, std::uint64_t n) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

// The shortest text that reads back as `x`; JSON has no NaN or infinity: those are written 0.
void append_number(std::string& out, double x) {
  if (!std::isfinite(x)) x = 0;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}

}  // namespace

void append_detection_json(std::string& out, const detection& d) {
  out += "{\"detector\":";
  append_json_string(out, to_string(d.detector));
  out += ",\"level\":";
  append_json_string(out, to_string(d.level));
  out += ',';
  append_key(out, "count");
  append_uint(out, d.count);
  out += ',';
  append_key(out, "confidence");
  append_number(out, d.confidence);
  out += ',';
  append_key(out, "loop_start");
  append_uint(out, d.loop_start);
  out += ',';
  append_key(out, "occurrence");
  append_uint(out, d.occurrence);
  out += ",\"tool\":";
  append_json_string(out, d.tool);
  out += ",\"message\":";
  append_json_string(out, d.message);
  out += ",\"suggestion\":";
  append_json_string(out, d.suggestion);
  out += '}';
}

void append_verdict_json(std::string& out, const verdict& v) {
  out += "{\"action\":";
  append_json_string(out, to_string(v.action));
  out += ",\"level\":";
  append_json_string(out, to_string(v.level));
  out += ',';
  append_key(out, "event_index");
  append_uint(out, v.event_index);
  out += ",\"detections\":[";
  for (std::size_t i = 0; i < v.detections.size(); ++i) {
    if (i > 0) out += ',';
    append_detection_json(out, v.detections[i]);
  }
  out += ']';
  if (v.would_have) {
    out += ",\"would_have\":";
    append_json_string(out, to_string(*v.would_have));
  }
  out += '}';
}

std::string verdict_json(const verdict& v) {
  std::string out;
  out.reserve(96 + v.detections.size() * 512);
  append_verdict_json(out, v);
  return out;
}

}  // namespace loopguard
