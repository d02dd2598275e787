#include "inspect_view.hpp"

#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"

namespace loopguard::cli {
namespace {

using json_fields::required;
using nlohmann::json;

constexpr json_fields::options kAnswer{
    .name = "the answer", .unknown = json_fields::unknown_keys::ignore, .null_is_absent = true};

void read_cost(json_fields::object o, protocol::cost& c) {
  o.integer("tokens", c.tokens);
  o.number("amount", c.amount, 0);
}

// In a detail, `workers` and `verdicts` are lists (read_worker, read_verdict), not numbers.
void read_summary(json_fields::object& o, swarm_summary_view& s, bool detail) {
  o.string(required("swarm"), s.swarm);
  o.integer(required("fingerprints"), s.fingerprints);
  if (!detail) {
    o.integer(required("workers"), s.workers);
    o.integer(required("verdicts"), s.verdicts);
  }
  o.integer(required("calls"), s.calls);
  read_cost(o.at("spent"), s.spent);
  read_cost(o.at("wasted"), s.wasted);
  o.string("unit", s.unit);
  o.string("budget.level", s.budget_level);
  o.number("budget.used", s.budget_used, 0);
}

void read_worker(json_fields::object o, worker_view& w) {
  o.string(required("name"), w.name);
  o.string("mode", w.mode);
  o.integer("detections", w.detections);
  json_fields::object counts = o.at("detection_counts");
  for (const std::string_view detector : o.keys("detection_counts")) {
    std::array<std::uint64_t, 3> n{};
    json_fields::object by_level = counts.member(detector);
    by_level.integer("warn", n[0]);
    by_level.integer("critical", n[1]);
    by_level.integer("terminate", n[2]);
    w.counts.emplace_back(std::string(detector), n);
  }
  const json* last = o.array("last_detections");
  if (last != nullptr && !last->empty()) {
    json_fields::object d = o.item(last, "last_detections", last->size() - 1);
    d.string(required("detector"), w.last_detector);
    d.string("level", w.last_level);
  }
}

void read_fingerprint(json_fields::object o, fingerprint_view& f) {
  o.string("kind", f.kind);
  o.string("fingerprint", f.fingerprint);
  o.string(required("tool"), f.tool);
  o.string("summary", f.summary);
  o.string("level", f.level);
  o.integer(required("calls"), f.calls);
  o.integer("counted", f.counted);
  o.integer("workers", f.workers);
  o.number("first_seen", f.first_seen);
  o.number("last_seen", f.last_seen);
  read_cost(o.at("wasted"), f.wasted);
}

void read_verdict(json_fields::object o, verdict_view& v) {
  o.string("tool", v.tool);
  o.string("kind", v.kind);
  o.string("fingerprint", v.fingerprint);
  o.string(required("level"), v.level);
  o.string("message", v.message);
  o.integer("calls", v.calls);
  o.integer("workers", v.workers);
  read_cost(o.at("cost"), v.cost);
  o.number("t", v.t);
}

// Reads every element of the array `name` with `read`.
template <class T, class Read>
void read_items(json_fields::object& o, json_fields::key name, std::vector<T>& out, Read read) {
  const json* list = o.array(name);
  if (list == nullptr) return;
  for (std::size_t i = 0; i < list->size() && o.ok(); ++i) {
    read(o.item(list, name.path, i), out.emplace_back());
  }
}

result<json> parse_body(std::string_view body) {
  auto doc = json_input::parse(body);
  if (!doc) return doc.error().with_context("not JSON: ");
  if (!doc->value.is_object()) return status::error("expected a JSON object");
  return std::move(doc->value);
}

}  // namespace

result<parsed_answer<std::vector<swarm_summary_view>>> parse_swarm_list(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return doc.error();
  parsed_answer<std::vector<swarm_summary_view>> out{std::move(*doc), {}};
  json_fields::reader r(out.document, kAnswer);
  read_items(r, required("swarms"), out.view,
             [](json_fields::object o, swarm_summary_view& s) { read_summary(o, s, false); });
  if (status s = r.finish(); !s.ok()) return s;
  return out;
}

result<parsed_answer<swarm_detail_view>> parse_swarm_detail(std::string_view body) {
  auto doc = parse_body(body);
  if (!doc) return doc.error();
  parsed_answer<swarm_detail_view> out{std::move(*doc), {}};
  json_fields::reader r(out.document, kAnswer);
  swarm_detail_view& v = out.view;
  read_summary(r, v.summary, true);
  r.strings(required("worker_names"), v.worker_names);
  v.summary.workers = v.worker_names.size();
  read_items(r, required("workers"), v.workers, read_worker);
  read_items(r, required("top"), v.top, read_fingerprint);
  read_items(r, required("verdicts"), v.verdicts, read_verdict);
  v.summary.verdicts = v.verdicts.size();
  if (r.has("connected")) r.strings("connected", v.connected.emplace());
  if (status s = r.finish(); !s.ok()) return s;
  return out;
}

std::string error_of(std::string_view body) {
  const auto doc = json_input::parse(body);
  if (!doc || !doc->value.is_object()) return {};
  const auto it = doc->value.find("error");
  return it != doc->value.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace loopguard::cli
