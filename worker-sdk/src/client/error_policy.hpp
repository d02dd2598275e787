// What a daemon client does about each error code (docs/protocol.md, "error"): drop the event
// it is about, reconnect after a backoff, or stop reconnecting.
#pragma once

#include <cstdint>
#include <string_view>

namespace loopguard::client {

enum class error_class {
  per_event,  // the daemon refused what was sent: drop that event with a gap, reconnect
  retry,      // back off and reconnect; everything unacknowledged is sent again
  fatal,      // unauthorized / unsupported_version / invalid_utf8: no reconnect would help
  // incarnation_expired: reconnect as a new incarnation, declaring everything unacknowledged
  // as a gap (the daemon dropped what it knew of the old one: resending could count twice)
  new_incarnation,
};

error_class classify(std::string_view code);

// A per-event error without a `seq` (a daemon without error_seq) does not say which event was
// refused. Refusals that repeat at the same acknowledgement without progress drop the oldest
// event held, one per kRefusals refusals, so a bad event is never resent forever.
class refusal_tracker {
 public:
  static constexpr unsigned kRefusals = 3;
  // The event to drop now (0: none yet).
  std::uint64_t on_refusal(std::uint64_t acknowledged, std::uint64_t oldest_event);
  void on_ack(std::uint64_t seq);

 private:
  std::uint64_t at_ = 0;
  unsigned count_ = 0;
};

}  // namespace loopguard::client
