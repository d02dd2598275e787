// trace_recorder: turns one worker's run (the events it fed its manager and the verdicts they
// got) into a recording: lines of the trace format (docs/trace-format.md) and, beside them, the
// detection lines of `loopguard replay`'s output (detection_line.hpp) for every detection the
// agent was given. `loopguard replay --config C TRACE` of the recording, with the manager's
// configuration C (the meta line holds it), prints the local detection lines again, byte for
// byte (docs/sdk.md, "Recording a run", says when it cannot).
//
// Pure: lines in, lines out; swarm_worker::record() writes them to files. Thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/config.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard {

// What one event adds to the recording: zero or more trace lines and detection lines, each
// newline-terminated.
struct recorded_lines {
  std::string trace, detections;
};

// Where the detection lines of the recording at `trace_path` go by default: the same name with
// ".jsonl" replaced by ".detections.jsonl" (`run.jsonl` -> `run.detections.jsonl`), or with
// ".detections.jsonl" added when it does not end in ".jsonl".
std::string default_detections_path(std::string_view trace_path);

class trace_recorder {
 public:
  struct options {
    std::string trace_name;  // the trace as detection lines name it (`trace`): its path
    std::string worker = "w0", swarm = "default";  // identifiers (trace-format.md)
    std::string name;                              // the meta line's name; empty: none
  };

  // Trace format version written in the meta line.
  static constexpr std::string_view kFormatVersion = "1.3";

  explicit trace_recorder(options o);

  // The first line of the trace: {"kind":"meta","name":...,"source":"loopguard SDK",
  // "format":"1.3","config":<to_json(config)>}.
  std::string meta(const manager_config& config) const;

  // An event the manager judged, and its verdict. `ev`'s worker and swarm are replaced by the
  // recorder's; a tool_call's args must be an object (else `{}` is written, with the text the
  // agent sent as "args_text", which replay ignores). The verdict's detections are written at
  // this event.
  recorded_lines event(trace_event ev, const verdict& v,
                       std::optional<std::string_view> args_text = std::nullopt);
  // A streamed chunk (on_text_chunk). The format has whole turns only: the chunks become the
  // turn's one text event, the next on_text (whose content is the whole text); when something
  // else comes first, a text event of the chunks joined is written before it. Detections on
  // chunks are written at that text event.
  recorded_lines chunk(std::string_view chunk, const verdict& v, std::optional<double> t);
  // A verdict of no event (add_cost): its detections at the event it names.
  recorded_lines verdict_only(const verdict& v);

  std::size_t events() const { return next_trace_; }      // trace events written
  std::size_t detection_lines() const { return lines_; }  // detection lines written

 private:
  // Writes the streamed turn as a text event (`content`: the whole text).
  void end_stream(recorded_lines& out, std::string content, std::optional<double> t);
  // The trace index of the manager's event `i`; nullopt while it is a chunk not yet written.
  std::optional<std::size_t> trace_index(std::size_t i) const;
  void map(std::size_t manager_index, std::optional<std::size_t> trace);
  void add_detections(recorded_lines& out, const verdict& v);
  void write(recorded_lines& out, std::size_t trace, detection d);

  options o_;
  std::size_t next_trace_ = 0;
  std::size_t lines_ = 0;
  std::vector<std::optional<std::size_t>> to_trace_;  // manager event index -> trace index
  std::string stream_;                                // the chunks of the open stream
  bool streaming_ = false;
  std::optional<double> stream_t_;   // the first chunk's time
  std::vector<std::size_t> chunks_;  // manager indices of the open stream's chunks
  std::vector<detection> held_;      // detections at chunks, until their text event is written
};

}  // namespace loopguard
