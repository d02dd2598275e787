#include "loopguard/trace.hpp"

#include <istream>
#include <limits>

#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

using json_fields::object;
using json_fields::required;

// Fields the format does not define are ignored (docs/trace-format.md).
constexpr json_fields::options kLineRules{.name = "line",
                                          .unknown = json_fields::unknown_keys::ignore};
constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

// The event kinds in event_kind's order (parse_trace_line casts), then meta.
enum class line_kind { tool_call, tool_result, text, user, resume, meta };

void parse_expect(object x, trace_expect& out) {
  x.boolean(required("loop"), out.loop);
  std::size_t within = 0;
  if (x.integer("within", within)) {
    if (!out.loop) x.fail("within", "no value unless \"loop\" is true", nlohmann::json(within));
    out.within = within;
  }
  x.string("detector", out.detector);
}

trace_meta parse_meta(object& r) {
  trace_meta m;
  r.string("name", m.name);
  r.string("source", m.source);
  r.string("agent", m.agent);
  if (r.has("expect")) {
    trace_expect x;
    parse_expect(r.at("expect"), x);
    m.expect = x;
  }
  return m;
}

trace_event parse_event(object& r, event_kind kind, std::size_t line_no) {
  trace_event ev;
  ev.kind = kind;
  ev.line = line_no;
  r.identifier("worker", ev.worker, kUnlimited);
  r.identifier("swarm", ev.swarm, kUnlimited);
  if (ev.worker.empty()) ev.worker = "w0";
  if (ev.swarm.empty()) ev.swarm = "default";
  double t = 0;
  if (r.number("t", t)) ev.t = t;  // finite: json_input refuses numbers beyond a double's range
  switch (kind) {
    case event_kind::tool_call:
      r.string(required("tool"), ev.tool);
      r.any_object(required("args"), ev.args);
      r.string("id", ev.id);
      r.identifier("peer", ev.peer, kUnlimited);
      break;
    case event_kind::tool_result:
      r.string(required("tool"), ev.tool);
      r.string(required("output"), ev.output);
      r.boolean("ok", ev.ok);
      r.string("id", ev.id);
      r.integer("cost.tokens", ev.cost.tokens, 0, protocol::kMaxEventTokens);
      r.number("cost.amount", ev.cost.amount, 0, protocol::kMaxEventAmount);
      break;
    case event_kind::text:
      r.string(required("content"), ev.content);
      break;
    case event_kind::user:
      r.string("content", ev.content);
      break;
    case event_kind::resume:
      break;
  }
  return ev;
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
    case event_kind::user:
      return "user";
    case event_kind::resume:
      return "resume";
  }
  return "?";
}

result<trace_line> parse_trace_line(std::string_view line, std::size_t line_no) {
  trace_line out;
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) return out;
  const auto doc = json_input::parse(line);
  if (!doc) return doc.error();
  json_fields::reader r(doc->value, kLineRules);
  line_kind kind = line_kind::text;
  r.one_of(required("kind"), kind,
           {json_fields::choice<line_kind>{"tool_call", line_kind::tool_call},
            json_fields::choice<line_kind>{"tool_result", line_kind::tool_result},
            json_fields::choice<line_kind>{"text", line_kind::text},
            json_fields::choice<line_kind>{"user", line_kind::user},
            json_fields::choice<line_kind>{"resume", line_kind::resume},
            json_fields::choice<line_kind>{"meta", line_kind::meta}});
  if (!r.ok()) return r.first_error();
  if (kind == line_kind::meta) {
    out.meta = parse_meta(r);
  } else {
    out.event = parse_event(r, static_cast<event_kind>(kind), line_no);
  }
  if (status s = r.finish(); !s.ok()) return s;
  return out;
}

result<trace> read_trace(std::istream& in) {
  trace out;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    auto parsed = parse_trace_line(line, line_no);
    if (!parsed) return parsed.error().with_context(std::to_string(line_no) + ": ");
    if (parsed->event) out.events.push_back(std::move(*parsed->event));
    if (parsed->meta && !out.meta) out.meta = std::move(*parsed->meta);
  }
  if (in.bad()) return status::error(std::to_string(line_no + 1) + ": read error");
  return out;
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
