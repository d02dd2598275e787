#include "loopguard/event_line.hpp"

#include <charconv>
#include <cmath>

#include "loopguard/canonical_json.hpp"

namespace loopguard {
namespace {

void append_field(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  out += key;
  out += "\":";
  append_json_string(out, value);
}

void append_time(std::string& out, double t) {
  if (!std::isfinite(t)) return;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, t);
  out += ",\"t\":";
  out.append(buf, r.ptr);
}

void append_cost(std::string& out, const protocol::cost& c) {
  if (c.empty()) return;
  char buf[32];
  out += ",\"cost\":{\"tokens\":";
  out += std::to_string(c.tokens);
  out += ",\"amount\":";
  const double amount = std::isfinite(c.amount) ? c.amount : 0;
  const auto r = std::to_chars(buf, buf + sizeof buf, amount);
  out.append(buf, r.ptr);
  out += '}';
}

}  // namespace

std::string event_line(const trace_event& ev) {
  std::string out = "{\"kind\":";
  append_json_string(out, to_string(ev.kind));
  append_field(out, "worker", ev.worker);
  append_field(out, "swarm", ev.swarm);
  if (ev.t) append_time(out, *ev.t);
  switch (ev.kind) {
    case event_kind::tool_call:
      append_field(out, "tool", ev.tool);
      out += ",\"args\":";
      append_canonical_json(out, ev.args.is_object() ? ev.args : nlohmann::json::object());
      if (!ev.id.empty()) append_field(out, "id", ev.id);
      if (!ev.peer.empty()) append_field(out, "peer", ev.peer);
      break;
    case event_kind::tool_result:
      append_field(out, "tool", ev.tool);
      out += ev.ok ? ",\"ok\":true" : ",\"ok\":false";
      append_field(out, "output", ev.output);
      if (!ev.id.empty()) append_field(out, "id", ev.id);
      append_cost(out, ev.cost);
      break;
    case event_kind::text:
      append_field(out, "content", ev.content);
      break;
    case event_kind::user:
      if (!ev.content.empty()) append_field(out, "content", ev.content);
      break;
    case event_kind::resume:
      break;
  }
  out += '}';
  return out;
}

}  // namespace loopguard
