// The judged calls of one run (docs/protocol.md, "events"; docs/sdk.md, "Judged calls"): each
// call is sent to the sink once, with its result when the result arrives, without one when the
// turn it belongs to is over and it got none. Internal to the SDK; the manager uses it only
// while a call sink is set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "call_history.hpp"
#include "loopguard/execution_economics_manager.hpp"

namespace loopguard::sdk {

class pending_calls {
 public:
  using sink = ExecutionEconomicsManager::call_sink;

  // Beyond this many waiting calls (an agent that never reports results), the oldest is sent
  // without a result.
  static constexpr std::size_t kMaxWaiting = 1024;

  // A call was judged: the calls made before the last result or text are sent without a result
  // (parallel calls of one turn wait for their results until the turn is over), then this one
  // waits for its result, or is sent at once when it was refused (no result comes).
  void on_call(const call_record& rec, bool refused, const sink& out);
  // A result at event `index`, answering `rec` (nullptr: no call): its call is sent with it and
  // with `spent` (when the call was sent already, or there is none: charged as add_cost is).
  void on_result(const call_record* rec, bool ok, std::uint64_t result, std::size_t index,
                 const protocol::cost& spent, const sink& out);
  // A cost reported after the fact: the newest waiting call carries it; with none waiting, a
  // charge to the call sent last. Before any call: nothing to charge.
  void charge(const protocol::cost& spent, const sink& out);
  // A text at event `index` ends the turn, as a result does.
  void on_text(std::size_t index) { boundary_ = index + 1; }
  // Sends every waiting call without a result.
  void flush(const sink& out);

  std::size_t size() const { return calls_.size(); }

 private:
  std::optional<judged_call> take(std::size_t call_event);
  void send_front(const sink& out);
  void emit(const judged_call& call, const sink& out);  // remembers it as the last sent

  std::deque<judged_call> calls_;         // by call_event, oldest first
  std::size_t boundary_ = 0;              // 1 + the index of the last result or text; 0 before any
  std::optional<judged_call> last_sent_;  // tool and fingerprints of the call sent last
};

}  // namespace loopguard::sdk
