// A worked example: a toy agent guarded by Loopguard, linked the way a user links the SDK
// (CMakeLists.txt beside this file; docs/sdk.md, "Example: an agent loop").
//
// The toy model keeps reading the same file. Loopguard nudges it (the nudge is added to the
// tool result the model sees), then rejects the call (the call does not run; the model gets the
// explanation as its result); the model then changes course and finishes. Run it alone (local
// rules), or with LOOPGUARD_DAEMON=ws://HOST:PORT, LOOPGUARD_SWARM, LOOPGUARD_WORKER (and
// LOOPGUARD_TOKEN) set to join a swarm.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <loopguard/swarm_worker.hpp>

namespace {

struct tool_call {
  std::string id, name, args_json;
};

// Stands in for the LLM: rereads config.yaml until a call of it is rejected, then searches the
// code instead, then says it is done.
class toy_model {
 public:
  std::optional<tool_call> next() {
    const std::string id = "call-" + std::to_string(++turn_);
    if (!rejected_) return tool_call{id, "read_file", R"({"path": "config.yaml"})"};
    if (!searched_) {
      searched_ = true;
      return tool_call{id, "search", R"({"query": "where is the port set"})"};
    }
    return std::nullopt;
  }
  // What the model sees as the call's result.
  void tool_result(const tool_call& call, const std::string& text, bool rejected) {
    rejected_ = rejected_ || rejected;
    std::string shown = text.size() > 72 ? text.substr(0, 72) + "..." : text;
    for (std::size_t at = shown.find('\n'); at != std::string::npos; at = shown.find('\n', at)) {
      shown.replace(at, 1, " | ");
    }
    std::cout << "  model sees for " << call.id << ": " << shown << '\n';
  }

 private:
  int turn_ = 0;
  bool rejected_ = false, searched_ = false;
};

std::string run_tool(const tool_call& call) {
  if (call.name == "read_file") return "port: 8080\nhost: localhost";
  return "server.cpp:12: listen(config.port)";
}

void show(const tool_call& call, const char* when, const loopguard::verdict& v) {
  std::cout << call.id << ' ' << call.name << ' ' << when << ": " << to_string(v.action);
  if (!v.detections.empty()) std::cout << " (" << to_string(v.strongest().detector) << ')';
  std::cout << '\n';
}

// The agent loop: what the caller does with each action. Returns "DONE" or "LOOP_DETECTED".
std::string run_agent(loopguard::swarm_worker& guard, toy_model& model) {
  using loopguard::action;
  const std::string stopped(loopguard::kLoopDetectedStatus);
  while (const std::optional<tool_call> call = model.next()) {
    const loopguard::verdict before =
        guard.on_tool_call_json(call->name, call->args_json, call->id);
    show(*call, "before", before);
    if (before.action == action::terminate) return stopped;
    if (before.action == action::reject) {  // not run, and no on_tool_result for it
      model.tool_result(*call, before.strongest().message, true);
      continue;
    }
    const std::string output = run_tool(*call);
    const loopguard::verdict after = guard.on_tool_result(call->name, true, output, call->id);
    show(*call, "after", after);
    if (after.action == action::terminate) return stopped;
    std::string text = output;
    for (const loopguard::verdict* v : {&before, &after}) {
      if (v->action == action::nudge) text += "\n\n" + v->strongest().message;
    }
    model.tool_result(*call, text, false);
  }
  return "DONE";
}

// Joins the swarm named by LOOPGUARD_* when LOOPGUARD_DAEMON is set. False on a bad option.
bool join_swarm(loopguard::swarm_worker& guard) {
  if (std::getenv("LOOPGUARD_DAEMON") == nullptr) return true;
  auto options = loopguard::options_from_env({});
  loopguard::status s = options ? guard.connect(*options) : options.error();
  if (!s.ok()) std::cerr << "guarded_agent: " << s.message() << '\n';
  return s.ok();
}

}  // namespace

int main() {
  loopguard::swarm_worker guard;  // the balanced preset; or swarm_worker(parse_config(...))
  if (!join_swarm(guard)) return 2;
  toy_model model;
  const std::string outcome = run_agent(guard, model);
  std::cout << "outcome: " << outcome << '\n';
  guard.flush();  // the end of the run: send the calls still waiting for a result
  if (loopguard::daemon_client* client = guard.client()) {
    const bool all = client->wait_acknowledged(client->stats().sent, std::chrono::seconds(5));
    std::cout << "daemon acknowledged every event: " << (all ? "yes" : "no") << '\n';
  }
  return outcome == "DONE" ? 0 : 1;
}
