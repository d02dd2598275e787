#include "client/recording.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::client {
namespace {

trace_event event_of(event_kind kind) {
  trace_event ev;
  ev.kind = kind;
  return ev;
}

std::string why(const std::string& path) {
  return utf8::repair(path + ": " + std::strerror(errno));
}

}  // namespace

recording::recording(const recording_options& o, trace_recorder::options r)
    : recorder_(std::move(r)),
      clock_(o.clock),
      trace_path_(o.path),
      detections_path_(o.detections_path.empty() ? default_detections_path(o.path)
                                                 : o.detections_path) {}

result<std::unique_ptr<recording>> recording::open(const recording_options& o,
                                                   const manager_config& config, std::string worker,
                                                   std::string swarm) {
  trace_recorder::options r{o.path, std::move(worker), std::move(swarm), o.name};
  std::unique_ptr<recording> rec(new recording(o, std::move(r)));
  rec->trace_ = std::fopen(rec->trace_path_.c_str(), "w");
  if (rec->trace_ == nullptr) return status::error("record: cannot open " + why(o.path));
  rec->detections_ = std::fopen(rec->detections_path_.c_str(), "w");
  if (rec->detections_ == nullptr) {
    return status::error("record: cannot open " + why(rec->detections_path_));
  }
  rec->write({rec->recorder_.meta(config), {}});
  if (!rec->error_.empty()) return status::error("record: " + rec->error_);
  return rec;
}

recording::~recording() {
  (void)close();
}

double recording::now() const {
  if (clock_) return clock_();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void recording::fail(const std::string& path) {
  if (error_.empty()) error_ = "cannot write " + why(path);
}

void recording::write(const recorded_lines& lines) {
  if (!error_.empty()) return;  // a failed recording stays stopped: no holes in the middle
  const auto put = [&](std::FILE* f, const std::string& text, const std::string& path) {
    if (text.empty()) return;
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) {
      fail(path);
    }
  };
  put(trace_, lines.trace, trace_path_);
  put(detections_, lines.detections, detections_path_);
}

void recording::event(trace_event ev, const verdict& v, std::optional<std::string_view> args_text) {
  ev.t = now();
  write(recorder_.event(std::move(ev), v, args_text));
}

void recording::tool_call(std::string_view tool, const nlohmann::json& args, std::string_view id,
                          std::string_view peer, const verdict& v) {
  trace_event ev = event_of(event_kind::tool_call);
  ev.tool = tool;
  ev.id = id;
  ev.peer = peer;
  if (args.is_object()) {
    ev.args = args;
    return event(std::move(ev), v);
  }
  ev.args = nlohmann::json::object();
  const std::string text = json_input::dump(args);
  event(std::move(ev), v, text);
}

void recording::tool_call_json(std::string_view tool, std::string_view args_json,
                               std::string_view id, std::string_view peer, const verdict& v) {
  trace_event ev = event_of(event_kind::tool_call);
  ev.tool = tool;
  ev.id = id;
  ev.peer = peer;
  auto doc = json_input::parse(args_json);
  if (doc && doc->value.is_object()) {
    ev.args = std::move(doc->value);
    return event(std::move(ev), v);
  }
  ev.args = nlohmann::json::object();
  event(std::move(ev), v, args_json);
}

void recording::tool_result(std::string_view tool, bool ok, std::string_view output,
                            std::string_view id, const protocol::cost& cost, const verdict& v) {
  trace_event ev = event_of(event_kind::tool_result);
  ev.tool = tool;
  ev.ok = ok;
  ev.output = output;
  ev.id = id;
  ev.cost = cost;
  event(std::move(ev), v);
}

void recording::text(std::string_view content, const verdict& v) {
  trace_event ev = event_of(event_kind::text);
  ev.content = content;
  event(std::move(ev), v);
}

void recording::chunk(std::string_view chunk, const verdict& v) {
  write(recorder_.chunk(chunk, v, now()));
}

void recording::user_message(std::string_view content, const verdict& v) {
  trace_event ev = event_of(event_kind::user);
  ev.content = content;
  event(std::move(ev), v);
}

void recording::resume(const verdict& v) {
  event(event_of(event_kind::resume), v);
}

void recording::cost(const verdict& v) {
  write(recorder_.verdict_only(v));
}

status recording::close() {
  for (auto [f, path] : {std::pair{&trace_, &trace_path_}, {&detections_, &detections_path_}}) {
    if (*f == nullptr) continue;
    if (std::fclose(*f) != 0) fail(*path);
    *f = nullptr;
  }
  return error_.empty() ? status{} : status::error("record: " + error_);
}

recording_stats recording::stats() const {
  return {trace_path_, detections_path_, recorder_.events(), recorder_.detection_lines(), error_};
}

}  // namespace loopguard::client
