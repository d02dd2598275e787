#include "loopguard/trace.hpp"

#include <istream>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

using json = nlohmann::json;

std::string type_name(const json& v) {
  return v.type_name();
}

// Reads an optional string field; false (with `err`) when present with another type.
bool optional_string(const json& obj, const char* key, std::string& out, std::string& err) {
  auto it = obj.find(key);
  if (it == obj.end()) return true;
  if (!it->is_string()) {
    err = std::string("field \"") + key + "\" must be a string, not " + type_name(*it);
    return false;
  }
  out = it->get<std::string>();
  return true;
}

bool required_string(const json& obj, const char* key, std::string& out, std::string& err) {
  if (obj.find(key) == obj.end()) {
    err = std::string("field \"") + key + "\" is missing";
    return false;
  }
  return optional_string(obj, key, out, err);
}

bool parse_expect(const json& e, trace_expect& out, std::string& err) {
  if (!e.is_object()) {
    err = "field \"expect\" must be an object, not " + type_name(e);
    return false;
  }
  auto loop = e.find("loop");
  if (loop == e.end() || !loop->is_boolean()) {
    err = "field \"expect.loop\" must be true or false";
    return false;
  }
  out.loop = loop->get<bool>();
  if (auto w = e.find("within"); w != e.end()) {
    if (!w->is_number_unsigned() && !(w->is_number_integer() && w->get<long long>() >= 0)) {
      err = "field \"expect.within\" must be a non-negative integer";
      return false;
    }
    if (!out.loop) {
      err = "field \"expect.within\" goes only with \"loop\": true";
      return false;
    }
    out.within = w->get<std::size_t>();
  }
  return optional_string(e, "detector", out.detector, err);
}

// An identifier: refused, not repaired, when it is not valid UTF-8 (utf8::is_identifier).
bool optional_identifier(const json& obj, const char* key, std::string& out, std::string& err) {
  if (!optional_string(obj, key, out, err)) return false;
  if (utf8::is_identifier(out)) return true;
  err = std::string("field \"") + key +
        "\" is not valid UTF-8 (an identifier may not hold invalid bytes, lone surrogates or "
        "U+FFFD)";
  return false;
}

bool parse_event(const json& obj, event_kind kind, trace_event& ev, std::string& err) {
  ev.kind = kind;
  if (!optional_identifier(obj, "worker", ev.worker, err)) return false;
  if (!optional_identifier(obj, "swarm", ev.swarm, err)) return false;
  if (ev.worker.empty()) ev.worker = "w0";
  if (ev.swarm.empty()) ev.swarm = "default";
  if (auto t = obj.find("t"); t != obj.end()) {
    if (!t->is_number()) {
      err = "field \"t\" must be a number, not " + type_name(*t);
      return false;
    }
    ev.t = t->get<double>();  // finite: json_input refuses numbers beyond a double's range
  }
  switch (kind) {
    case event_kind::tool_call: {
      if (!required_string(obj, "tool", ev.tool, err)) return false;
      auto args = obj.find("args");
      if (args == obj.end()) {
        err = "field \"args\" is missing";
        return false;
      }
      if (!args->is_object()) {
        err = "field \"args\" must be an object, not " + type_name(*args);
        return false;
      }
      ev.args = *args;
      return optional_string(obj, "id", ev.id, err);
    }
    case event_kind::tool_result: {
      if (!required_string(obj, "tool", ev.tool, err)) return false;
      if (!required_string(obj, "output", ev.output, err)) return false;
      if (auto ok = obj.find("ok"); ok != obj.end()) {
        if (!ok->is_boolean()) {
          err = "field \"ok\" must be true or false, not " + type_name(*ok);
          return false;
        }
        ev.ok = ok->get<bool>();
      }
      return optional_string(obj, "id", ev.id, err);
    }
    case event_kind::text:
      return required_string(obj, "content", ev.content, err);
  }
  return true;
}

}  // namespace

std::string_view to_string(event_kind k) {
  switch (k) {
    case event_kind::tool_call:
      return "tool_call";
    case event_kind::tool_result:
      return "tool_result";
    case event_kind::text:
      return "text";
  }
  return "?";
}

std::optional<trace_error> parse_trace_line(std::string_view line, std::size_t line_no,
                                            std::optional<trace_event>& event,
                                            std::optional<trace_meta>& meta) {
  event.reset();
  meta.reset();
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::nullopt;
  json_input::document doc;
  if (auto e = json_input::parse(line, doc)) return trace_error{line_no, std::move(*e)};
  json& obj = doc.value;
  if (!obj.is_object())
    return trace_error{line_no, "expected a JSON object, got " + type_name(obj)};
  auto kind_it = obj.find("kind");
  if (kind_it == obj.end()) return trace_error{line_no, "field \"kind\" is missing"};
  if (!kind_it->is_string()) return trace_error{line_no, "field \"kind\" must be a string"};
  const auto& kind = kind_it->get_ref<const std::string&>();
  std::string err;
  if (kind == "meta") {
    trace_meta m;
    if (!optional_string(obj, "name", m.name, err) ||
        !optional_string(obj, "source", m.source, err)) {
      return trace_error{line_no, err};
    }
    if (auto e = obj.find("expect"); e != obj.end()) {
      trace_expect x;
      if (!parse_expect(*e, x, err)) return trace_error{line_no, err};
      m.expect = x;
    }
    meta = std::move(m);
    return std::nullopt;
  }
  event_kind k;
  if (kind == "tool_call") {
    k = event_kind::tool_call;
  } else if (kind == "tool_result") {
    k = event_kind::tool_result;
  } else if (kind == "text") {
    k = event_kind::text;
  } else {
    return trace_error{
        line_no, "unknown kind \"" + kind + "\" (expected tool_call, tool_result, text or meta)"};
  }
  trace_event ev;
  ev.line = line_no;
  if (!parse_event(obj, k, ev, err)) return trace_error{line_no, err};
  event = std::move(ev);
  return std::nullopt;
}

std::optional<trace_error> read_trace(std::istream& in, trace& out) {
  std::string line;
  std::size_t line_no = 0;
  std::optional<trace_event> event;
  std::optional<trace_meta> meta;
  while (std::getline(in, line)) {
    ++line_no;
    if (auto err = parse_trace_line(line, line_no, event, meta)) return err;
    if (event) out.events.push_back(std::move(*event));
    if (meta && !out.meta) out.meta = std::move(*meta);
  }
  if (in.bad()) return trace_error{line_no + 1, "read error"};
  return std::nullopt;
}

void call_pairing::on_call(const trace_event& call, std::size_t event_index) {
  pending_.push_back({call.swarm, call.worker, call.tool, call.id, event_index});
}

std::optional<std::size_t> call_pairing::on_result(const trace_event& result) {
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->swarm != result.swarm || it->worker != result.worker) continue;
    const bool match = result.id.empty() ? it->tool == result.tool : it->id == result.id;
    if (match) {
      const std::size_t index = it->index;
      pending_.erase(it);
      return index;
    }
  }
  return std::nullopt;
}

}  // namespace loopguard
