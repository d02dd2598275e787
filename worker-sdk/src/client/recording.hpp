// recording: a trace_recorder writing to its two files (swarm_worker::record, docs/sdk.md
// "Recording a run"). The I/O half of the recorder: every event's lines are written and flushed
// before the event method returns, so a run that crashes keeps what it did. A write that fails
// ends the recording (the agent goes on); its error is kept for stats() and close().
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/status.hpp"
#include "loopguard/swarm_worker.hpp"
#include "loopguard/trace_recorder.hpp"

namespace loopguard::client {

class recording {
 public:
  // Opens (creates or truncates) both files and writes the meta line. `worker` and `swarm`:
  // checked identifiers.
  static result<std::unique_ptr<recording>> open(const recording_options& o,
                                                 const manager_config& config, std::string worker,
                                                 std::string swarm);
  ~recording();
  recording(const recording&) = delete;
  recording& operator=(const recording&) = delete;

  void tool_call(std::string_view tool, const nlohmann::json& args, std::string_view id,
                 std::string_view peer, const verdict& v);
  void tool_call_json(std::string_view tool, std::string_view args_json, std::string_view id,
                      std::string_view peer, const verdict& v);
  void tool_result(std::string_view tool, bool ok, std::string_view output, std::string_view id,
                   const protocol::cost& cost, const verdict& v);
  void text(std::string_view content, const verdict& v);
  void chunk(std::string_view chunk, const verdict& v);
  void user_message(std::string_view content, const verdict& v);
  void resume(const verdict& v);
  void cost(const verdict& v);  // add_cost: no event, its detections only

  // Closes both files; the first error of the recording, if any.
  status close();
  recording_stats stats() const;

 private:
  recording(const recording_options& o, trace_recorder::options r);
  void event(trace_event ev, const verdict& v,
             std::optional<std::string_view> args_text = std::nullopt);
  void write(const recorded_lines& lines);
  void fail(const std::string& path);
  double now() const;

  trace_recorder recorder_;
  std::function<double()> clock_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::string trace_path_, detections_path_;
  std::FILE* trace_ = nullptr;
  std::FILE* detections_ = nullptr;
  std::string error_;
};

}  // namespace loopguard::client
