#include "loopguard/trace_recorder.hpp"

#include <utility>

#include "loopguard/canonical_json.hpp"
#include "loopguard/detection_line.hpp"
#include "loopguard/event_line.hpp"
#include "loopguard/json_input.hpp"

namespace loopguard {

std::string default_detections_path(std::string_view trace_path) {
  constexpr std::string_view kSuffix = ".jsonl";
  if (trace_path.ends_with(kSuffix)) trace_path.remove_suffix(kSuffix.size());
  return std::string(trace_path) + ".detections.jsonl";
}

trace_recorder::trace_recorder(options o) : o_(std::move(o)) {}

std::string trace_recorder::meta(const manager_config& config) const {
  std::string out = "{\"kind\":\"meta\"";
  if (!o_.name.empty()) {
    out += ",\"name\":";
    append_json_string(out, o_.name);
  }
  out += ",\"source\":\"loopguard SDK\",\"format\":";
  append_json_string(out, kFormatVersion);
  out += ",\"config\":" + json_input::dump(to_json(config)) + "}\n";
  return out;
}

recorded_lines trace_recorder::event(trace_event ev, const verdict& v,
                                     std::optional<std::string_view> args_text) {
  recorded_lines out;
  const bool closes_stream = streaming_ && ev.kind == event_kind::text;
  if (streaming_ && !closes_stream) end_stream(out, std::exchange(stream_, {}), stream_t_);
  ev.worker = o_.worker;
  ev.swarm = o_.swarm;
  std::string line = event_line(ev);
  if (ev.kind == event_kind::tool_call && args_text) {
    line.pop_back();  // the closing brace
    line += ",\"args_text\":";
    append_json_string(line, *args_text);
    line += '}';
  }
  if (closes_stream) {
    stream_.clear();  // on_text's content is the whole turn
    end_stream(out, {}, std::nullopt);
  }
  out.trace += line + '\n';
  map(v.event_index, next_trace_++);
  add_detections(out, v);
  return out;
}

recorded_lines trace_recorder::chunk(std::string_view chunk, const verdict& v,
                                     std::optional<double> t) {
  recorded_lines out;
  if (!streaming_) stream_t_ = t;
  streaming_ = true;
  stream_ += chunk;
  map(v.event_index, std::nullopt);
  chunks_.push_back(v.event_index);
  add_detections(out, v);
  return out;
}

recorded_lines trace_recorder::verdict_only(const verdict& v) {
  recorded_lines out;
  add_detections(out, v);
  return out;
}

// With a content (a stream something else closed) the turn is written as a text event of its
// own; without one (closed by on_text) the text event about to be written is the turn's. Either
// way the chunks map to that event and the detections held for them are written.
void trace_recorder::end_stream(recorded_lines& out, std::string content, std::optional<double> t) {
  streaming_ = false;
  const std::size_t index = next_trace_;
  const bool own_event = !content.empty();
  if (own_event) {
    trace_event ev;
    ev.kind = event_kind::text;
    ev.worker = o_.worker;
    ev.swarm = o_.swarm;
    ev.t = t;
    ev.content = std::move(content);
    out.trace += event_line(ev) + '\n';
    ++next_trace_;
  }
  for (std::size_t chunk : std::exchange(chunks_, {})) to_trace_[chunk] = index;
  for (detection& d : std::exchange(held_, {})) write(out, index, std::move(d));
}

std::optional<std::size_t> trace_recorder::trace_index(std::size_t i) const {
  return i < to_trace_.size() ? to_trace_[i] : std::nullopt;
}

void trace_recorder::map(std::size_t manager_index, std::optional<std::size_t> trace) {
  if (to_trace_.size() <= manager_index) to_trace_.resize(manager_index + 1);
  to_trace_[manager_index] = trace;
}

void trace_recorder::add_detections(recorded_lines& out, const verdict& v) {
  const std::optional<std::size_t> at = trace_index(v.event_index);
  for (const detection& d : v.detections) {
    if (at) {
      write(out, *at, d);
    } else {
      held_.push_back(d);
    }
  }
}

void trace_recorder::write(recorded_lines& out, std::size_t trace, detection d) {
  if (const auto start = trace_index(d.loop_start)) d.loop_start = *start;
  out.detections += detection_line(o_.trace_name, trace, o_.worker, o_.swarm, d);
  ++lines_;
}

}  // namespace loopguard
