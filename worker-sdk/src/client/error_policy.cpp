#include "client/error_policy.hpp"

#include "loopguard/protocol.hpp"

namespace loopguard::client {

error_class classify(std::string_view code) {
  namespace c = protocol::codes;
  // invalid_utf8 is only ever about the hello's identifiers: resending them cannot help.
  // forbidden: the token does not grant this swarm or worker name; only configuration can help.
  if (code == c::unauthorized || code == c::forbidden || code == c::unsupported_version ||
      code == c::invalid_utf8) {
    return error_class::fatal;
  }
  if (code == c::bad_message || code == c::bad_json || code == c::batch_too_large ||
      code == c::frame_too_large) {
    return error_class::per_event;
  }
  if (code == c::incarnation_expired) return error_class::new_incarnation;
  // not_owner (a cluster's daemon that does not own the swarm) is retry too: the proxy routes
  // the reconnect to the owner, and nothing sent is lost meanwhile.
  return error_class::retry;  // and every code this client does not know
}

std::uint64_t refusal_tracker::on_refusal(std::uint64_t acknowledged, std::uint64_t oldest_event) {
  if (count_ == 0 || acknowledged != at_) {
    at_ = acknowledged;
    count_ = 0;
  }
  if (++count_ < kRefusals) return 0;
  count_ = 0;
  return oldest_event;
}

void refusal_tracker::on_ack(std::uint64_t seq) {
  if (seq > at_) count_ = 0;
}

}  // namespace loopguard::client
