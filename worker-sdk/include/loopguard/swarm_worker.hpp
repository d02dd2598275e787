// swarm_worker: what an agent links to be guarded alone and as part of a swarm. It owns one
// ExecutionEconomicsManager (pure, local rules) and, when connected, one daemon_client (the
// swarm), and wires them together on the agent's thread (docs/sdk.md, "Swarm mode"):
//  - every judged call the manager emits goes to the client (send(): never waits);
//  - every local detection is reported to the daemon;
//  - verdicts the daemon pushed are handed to the manager before each event, so the next
//    verdict carries a global nudge, and a call matching a critical global fingerprint is
//    rejected as local rules reject.
// Without connect() it is the manager alone. Thread-compatible, as the manager.
#pragma once

#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/daemon_client.hpp"
#include "loopguard/execution_economics_manager.hpp"

namespace loopguard {

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
                       std::string_view call_id = {});
  verdict on_tool_call_json(std::string_view tool, std::string_view args_json,
                            std::string_view call_id = {});
  verdict on_tool_result(std::string_view tool, bool ok, std::string_view output,
                         std::string_view call_id = {});
  verdict on_text(std::string_view content);
  verdict on_text_chunk(std::string_view chunk);
  verdict on_user_message(std::string_view content = {});
  verdict on_resume();
  verdict add_cost(double amount);
  // Sends the calls still waiting for a result (without one). For the end of a run.
  void flush();

  ExecutionEconomicsManager& manager();
  const ExecutionEconomicsManager& manager() const;
  daemon_client* client();  // nullptr until connect()

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard
