// The judged calls of a recording, as a worker sends them to loopguardd (protocol::event). A
// call is judged with its result, at the result's event; a call whose result is not in the
// recording is judged when it is made. Offline replay (replay_swarm) and `replay --daemon`
// (daemon_replay) both take their events from here, so both judge exactly the same events:
// the same fingerprints, the same `t`, at the same moment.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "loopguard/fingerprint.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::cli {

struct judged_call {
  std::size_t call = 0;   // trace index of the call: a global detection's loop_start
  protocol::event event;  // seq 0: the sender numbers it
};

class judged_calls {
 public:
  // Pairs every result with its call up front: replay sees the whole recording. `tr` must
  // outlive this object.
  judged_calls(const trace& tr, const fingerprint_options& options);

  // The judged call that trace event `index` completes, if it completes one.
  std::optional<judged_call> at(std::size_t index) const;

 private:
  protocol::event event_of(std::size_t call_index, std::size_t result_index) const;

  const trace& tr_;
  fingerprinter fp_;
  std::vector<std::size_t> call_of_;  // result event -> its call event (kNoEvent: none)
  std::vector<bool> answered_;        // call event -> a result follows in the recording
};

}  // namespace loopguard::cli
