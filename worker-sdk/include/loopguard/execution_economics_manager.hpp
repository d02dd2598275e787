// ExecutionEconomicsManager: one agent's loop guard.
//
// Feed it every tool call, tool result and text turn of one agent, in order; each call returns a
// verdict saying whether to let the agent go on, nudge it (a message to inject), reject the call
// (it must not run), or terminate the run (status LOOP_DETECTED). See docs/sdk.md.
//
// Contract:
//  - Pure: no I/O, no threads, no clock other than the one given with set_clock().
//  - Thread-compatible: one manager per agent; calls on one manager must not overlap.
//  - Never throws on bad agent input; arguments that are not valid JSON are fingerprinted as a
//    string (on_tool_call_json) so a malformed call still counts as a repeat.
//  - Strings that are not valid UTF-8 (tool names, ids, outputs, text) are repaired first: each
//    invalid sequence becomes U+FFFD (loopguard/utf8.hpp), the same rule `loopguard replay` and
//    the daemon apply, so the same bytes give the same fingerprints everywhere. A chunk that
//    ends inside a character keeps the incomplete bytes for the next chunk. Every message and
//    suggestion the manager returns is valid UTF-8.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/config.hpp"
#include "loopguard/judge.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard {

struct manager_stats {
  std::uint64_t checks = 0;  // events judged
  std::uint64_t tool_calls = 0, tool_results = 0, texts = 0, text_chunks = 0;
  std::uint64_t user_messages = 0, resumes = 0;
  std::uint64_t turns = 0;  // model turns, as the iteration limit counts them
  // detections[detector][severity]; severity index 1..3 = warn, critical, terminate
  std::array<std::array<std::uint64_t, 4>, kDetectorCount> detections{};
  std::uint64_t rejected = 0, terminated = 0;
  // The judge hook: questions asked, answers not believed (an exception, a probability outside
  // 0..1), and the cost the answers reported.
  std::uint64_t judge_checks = 0, judge_errors = 0;
  double judge_cost = 0;
};

// One judged call (docs/protocol.md, "events"): a call together with its result when one came,
// as the manager fingerprinted them. What the daemon client sends (protocol::event without seq
// and time).
struct judged_call {
  std::string tool, summary;  // summary: summary_of() the call's fingerprint (fingerprint.hpp)
  std::uint64_t exact = 0, structural = 0;
  bool ok = true;                       // the result's ok, when there is a result
  std::optional<std::uint64_t> result;  // fingerprinter::of_result(ok, output); none: no result
  std::size_t call_event = 0;           // the manager's event index of the call
  protocol::cost spent;                 // what the call cost, as reported (clamped to the
                                        // protocol's ranges)
  // Not a call: `spent` is a cost reported after this call was sent (add_cost), charged to it
  // (protocol event.charge); tool, exact and structural are the call's.
  bool charge = false;
  std::string peer;  // the worker the call hands work to (on_tool_call's `peer`); empty: none
};

class ExecutionEconomicsManager {
 public:
  using clock = std::function<double()>;  // seconds, any epoch
  // May replace any verdict (including allow) before it is returned.
  using verdict_override = std::function<verdict(verdict)>;
  // Receives each judged call once, from inside the event method that completes it.
  using call_sink = std::function<void(const judged_call&)>;

  ExecutionEconomicsManager();
  explicit ExecutionEconomicsManager(manager_config config);
  ~ExecutionEconomicsManager();
  ExecutionEconomicsManager(ExecutionEconomicsManager&&) noexcept;
  ExecutionEconomicsManager& operator=(ExecutionEconomicsManager&&) noexcept;

  // `peer`: the worker this call hands work to, when it does (docs/sdk.md, "Hand-offs"); the
  // judged call carries it to the swarm, whose daemon looks for hand-off loops.
  verdict on_tool_call(std::string_view tool, const nlohmann::json& args,
                       std::string_view call_id = {}, std::string_view peer = {});
  // The same with the arguments as JSON text, as most agents have them.
  verdict on_tool_call_json(std::string_view tool, std::string_view args_json,
                            std::string_view call_id = {}, std::string_view peer = {});
  // Pairs with the call of the same id, else with the oldest unanswered call of `tool`.
  // `cost`: what the call cost, as the caller knows it (docs/sdk.md, "Costs"): its amount counts
  // for the cost limit as add_cost's does, and the judged call carries it to the swarm.
  verdict on_tool_result(std::string_view tool, bool ok, std::string_view output,
                         std::string_view call_id = {}, const protocol::cost& cost = {});
  // One whole assistant turn of text (ends any streamed text of the turn).
  verdict on_text(std::string_view content);
  // A piece of streamed text; the content-loop check runs as the text arrives.
  verdict on_text_chunk(std::string_view chunk);
  // A message that came into the conversation from outside the agent: the user's next
  // instruction, a customer's reply, the harness's feedback (trace event `user`). What the
  // agent does after it answers something new: the repeat, cycle, error and streak rules and
  // the text rules start counting afresh; loop episodes (the terminate ladder), the limits
  // and the swarm's verdicts go on (docs/detectors.md, "User messages and resumes").
  verdict on_user_message(std::string_view content = {});
  // The run resumes after a pause (the user said "continue"; trace event `resume`): as a user
  // message, and loop episodes are forgotten too, so the first call after a resume does not
  // trip on streaks from before it. Limits and the swarm's verdicts go on.
  verdict on_resume();
  // Cost reported by the caller (any currency unit), for the cost limit. An amount that is not
  // finite, or not above 0, is ignored. It is charged to the last judged call: the call waiting
  // for its result carries it; after that call was sent, a charge follows it (judged_call).
  verdict add_cost(double amount);
  // The same with tokens (docs/sdk.md, "Costs").
  verdict add_cost(const protocol::cost& cost);
  // Records a swarm-wide verdict pushed by loopguardd (docs/protocol.md); returns nothing. The
  // next verdict the manager returns, from any method, carries a `global` detection with the
  // daemon's level, tool, call count and message (verbatim). While a verdict of level critical
  // or above is active for its (kind, fingerprint), a call with that exact or structural
  // fingerprint is rejected with the daemon's message; level none lifts it. Not an event.
  void on_swarm_verdict(const protocol::verdict& pushed);
  // The daemon said the swarm's task is done (swarm_complete): every swarm verdict is lifted
  // and any nudge of one not yet delivered is dropped.
  void on_swarm_complete();

  // Judged calls go to `f` (docs/sdk.md, "Judged calls"), each once: a call when its result
  // arrives; a call without one at the next call after a result or text (or by flush_calls());
  // a refused call at once. Without a sink nothing is kept. `f` must not call the manager.
  void set_call_sink(call_sink f);
  // Sends every call still waiting for its result to the sink, without a result.
  void flush_calls();

  // Forgets the run, calls waiting for a result included (not sent); keeps the settings, clock,
  // override, sink and the swarm's verdicts (active ones and nudges not yet delivered).
  void reset();
  void set_clock(clock c);
  void set_override(verdict_override f);
  // The judge hook (docs/sdk.md, "Judge hook"): asked per the `detectors.judge` settings with a
  // bounded digest of the recent history; an answer at or above the threshold is a `judge`
  // detection carrying its reason and cost. Kept by reset(). `f` must not call the manager.
  void set_judge(judge_fn f);

  const manager_stats& stats() const;
  const manager_config& config() const;
  std::size_t events() const;  // events seen; the next event's index

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace loopguard
