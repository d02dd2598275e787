// swarm_worker: what an agent links to be guarded alone and as part of a swarm. It owns one
// ExecutionEconomicsManager (pure, local rules) and, when connected, one daemon_client (the
// swarm), and wires them together on the agent's thread (docs/sdk.md, "Swarm mode"):
//  - every judged call the manager emits goes to the client (send(): never waits);
//  - every local detection is reported to the daemon;
//  - verdicts the daemon pushed are handed to the manager before each event, so the next
//    verdict carries a global nudge, and a call matching a critical global fingerprint is
//    rejected as local rules reject.
// Without connect() it is the manager alone. record() also writes the run as a recording
// (docs/sdk.md, "Recording a run"). Thread-compatible, as the manager.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/daemon_client.hpp"
#include "loopguard/execution_economics_manager.hpp"

namespace loopguard {

// Where and how swarm_worker::record() writes a run (docs/sdk.md, "Recording a run").
struct recording_options {
  std::string path;             // the trace, JSON Lines (docs/trace-format.md); created or emptied
  std::string detections_path;  // empty: default_detections_path(path) (run.detections.jsonl)
  std::string name;             // the meta line's name; empty: none
  std::string worker, swarm;    // empty: the connection's (after connect()), else w0 / default
  // Each event's `t`, in seconds: give the manager's clock (set_clock) when its wall-time limit
  // is on, so that replay reproduces it. None: seconds since record() (a steady clock).
  std::function<double()> clock;
};

struct recording_stats {
  std::string path, detections_path;
  std::size_t events = 0;           // trace events written (the meta line not counted)
  std::size_t detection_lines = 0;  // detection lines written
  std::string error;                // the write that failed and stopped the recording; empty: none
};

class swarm_worker {
 public:
  explicit swarm_worker(manager_config config = {});
  ~swarm_worker();
  swarm_worker(swarm_worker&&) noexcept;
  swarm_worker& operator=(swarm_worker&&) noexcept;

  // Starts the daemon client (validate(options) first: an error says what is wrong and
  // nothing starts). May be called once; the manager keeps working whatever the daemon does.
  status connect(client_options options);
  // The same on the caller's io_context.
  status connect(client_options options, boost::asio::io_context& io);

  verdict on_tool_call(std::string_view tool, const nlohmann::json& args,
                       std::string_view call_id = {}, std::string_view peer = {});
  verdict on_tool_call_json(std::string_view tool, std::string_view args_json,
                            std::string_view call_id = {}, std::string_view peer = {});
  verdict on_tool_result(std::string_view tool, bool ok, std::string_view output,
                         std::string_view call_id = {}, const protocol::cost& cost = {});
  verdict on_text(std::string_view content);
  verdict on_text_chunk(std::string_view chunk);
  verdict on_user_message(std::string_view content = {});
  verdict on_resume();
  verdict add_cost(double amount);
  verdict add_cost(const protocol::cost& cost);
  // Sends the calls still waiting for a result (without one). For the end of a run.
  void flush();

  // Records the run from now on: every event and verdict, written and flushed as it happens.
  // Must come before the first event (a recording is a whole run) and at most once at a time.
  // An error names the file (`record: cannot open runs/a.jsonl: No such file or directory`).
  status record(recording_options options);
  // Ends the recording and closes its files; the first error it met. Without one: nothing.
  status stop_recording();
  // What the recording wrote so far; nullopt when none is running.
  std::optional<recording_stats> recording() const;

  ExecutionEconomicsManager& manager();
  const ExecutionEconomicsManager& manager() const;
  daemon_client* client();  // nullptr until connect()

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard
