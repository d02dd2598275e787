// The event log (docs/storage.md, "Log"): the operations the swarm state applied since the last
// compaction, in the order it applied them, so that rows + replay == the state that was
// acknowledged. One record per group commit; a record is self-contained.
//
// Pure; thread-safety: none (the swarm_service keeps its writer behind its mutex).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "loopguard/status.hpp"
#include "state/shared_economics_state.hpp"

namespace loopguard::daemon {

class event_log_writer {
 public:
  // First byte of every record. Format 2 (schema 3) adds each event's cost and the charge flag;
  // records of format 1 (schema 2) are still replayed.
  static constexpr std::uint8_t kFormat = 2;

  // An event the state applied / a swarm it completed (only when complete() returned true).
  void event(const swarm_event& e);
  void complete(std::string_view swarm);
  // A swarm the state expired into a tombstone (only when expire() returned true).
  void expire(std::string_view swarm, double wall);

  // The record so far (empty when nothing was logged); starts a new one.
  std::string take();
  std::size_t bytes() const { return out_.size(); }

 private:
  void context(std::string_view swarm, std::string_view worker);
  std::string out_;
  std::string swarm_, worker_;  // context of the record's last event
  bool has_context_ = false;
};

// Applies one record to `state` (verdicts are dropped: they were pushed when the events first
// arrived). An error says what is malformed; the state may then hold part of the record.
// `repaired` (when given) grows by the stored strings that were not valid UTF-8.
status replay_log_record(std::string_view record, shared_economics_state& state,
                         std::size_t* repaired = nullptr);

}  // namespace loopguard::daemon
