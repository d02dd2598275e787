// The loopguardd wire protocol, version 1 (docs/protocol.md): the messages a worker and the
// daemon exchange over one WebSocket, their JSON text form and the compact binary form of an
// event batch. Pure: parsing and serializing only, no I/O.
//
// Fingerprints travel as 16 lowercase hex digits (loopguard/hex.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "loopguard/severity.hpp"
#include "loopguard/status.hpp"

namespace loopguard::protocol {

inline constexpr int kVersion = 1;
// Limits every peer must respect; the daemon refuses anything larger (docs/protocol.md).
inline constexpr std::size_t kMaxFrameBytes = 1 << 20;  // one WebSocket message
inline constexpr std::size_t kMaxBatchEvents = 1024;    // events in one batch
inline constexpr std::size_t kMaxNameBytes = 128;       // swarm, worker, incarnation, token
inline constexpr std::size_t kMaxToolBytes = 128;
inline constexpr std::size_t kMaxSummaryBytes = 256;
inline constexpr std::size_t kMaxDetectionMessageBytes = 4096;  // a detection's message
// What one event may report it cost (feature cost): tokens and an amount in the swarm's unit.
inline constexpr std::uint64_t kMaxEventTokens = 1'000'000'000'000;  // 1e12
inline constexpr double kMaxEventAmount = 1e12;

// Stable error codes (the `code` of an error message).
namespace codes {
inline constexpr std::string_view bad_json = "bad_json";
inline constexpr std::string_view bad_message = "bad_message";
inline constexpr std::string_view invalid_utf8 = "invalid_utf8";  // an identifier field
inline constexpr std::string_view unsupported_version = "unsupported_version";
inline constexpr std::string_view unauthorized = "unauthorized";
// A right token that does not grant this: another swarm or worker name, or swarm_complete.
inline constexpr std::string_view forbidden = "forbidden";
inline constexpr std::string_view expected_hello = "expected_hello";
inline constexpr std::string_view duplicate_hello = "duplicate_hello";
inline constexpr std::string_view batch_too_large = "batch_too_large";
inline constexpr std::string_view frame_too_large = "frame_too_large";
inline constexpr std::string_view sequence_gap = "sequence_gap";
inline constexpr std::string_view bad_gap = "bad_gap";
inline constexpr std::string_view too_many_connections = "too_many_connections";
// A cluster's daemon refuses a swarm its ring gives another daemon (docs/scaling.md); the
// message names the owner. Retry: the proxy routes the swarm to its owner.
inline constexpr std::string_view not_owner = "not_owner";
inline constexpr std::string_view send_queue_overflow = "send_queue_overflow";
inline constexpr std::string_view idle_timeout = "idle_timeout";
inline constexpr std::string_view shutting_down = "shutting_down";
inline constexpr std::string_view internal = "internal";
// The hello names an incarnation the daemon expired (docs/operations.md, "Retention"): start a
// new incarnation and declare what was not acknowledged as a gap.
inline constexpr std::string_view incarnation_expired = "incarnation_expired";
}  // namespace codes

// What a daemon may list in welcome.features (docs/protocol.md, "Versioning"). A worker sends a
// message type or field that is not in protocol v1 only when the daemon listed its feature; a
// welcome without `features` is the v1 baseline (nothing listed).
namespace features {
// The daemon accepts `detection` messages (a worker's local detections, for the API).
inline constexpr std::string_view detections = "detections";
// After the welcome the daemon sends the swarm's active verdicts, and lifts a verdict whose
// counted calls fell below its level with a verdict of level none.
inline constexpr std::string_view active_verdicts = "active_verdicts";
// An error about one event carries that event's `seq`.
inline constexpr std::string_view error_seq = "error_seq";
// The daemon routes and checks `/ws?swarm=S` (a hello of another swarm is refused).
inline constexpr std::string_view swarm_url = "swarm_url";
// The daemon reads the hello's `mode` and shows an observing worker as such in its API. A hello
// comes before the welcome, so this one field cannot wait for the feature: a worker sends it
// whatever the daemon lists, and a daemon without the feature ignores it (as every daemon
// ignores a field it does not know).
inline constexpr std::string_view observe = "observe";
// The daemon reads what an event cost (`cost`), accepts charge events and binary batches LGB2,
// sums the cost of dead ends and says it in verdicts. A worker sends none of these without it.
inline constexpr std::string_view cost = "cost";
// The daemon reads an event's `peer` (the worker a call hands work to) and detects hand-off
// cycles between workers (verdict kind "handoff", sent to the workers of the cycle only).
inline constexpr std::string_view handoff = "handoff";
}  // namespace features

// worker -> daemon, first message. `incarnation`: random id chosen when the worker process
// starts; sequence numbers restart at 1 with every incarnation.
struct hello {
  int version = kVersion;
  std::string swarm, worker, incarnation, token;
  // `mode`: "observe" when the worker's manager only observes (feature observe); absent, or
  // any other value, is enforce.
  bool observing = false;
};

// daemon -> worker. `last_ack`: the highest sequence number of this incarnation that is
// durable; the worker resends everything after it.
struct welcome {
  int version = kVersion;
  std::uint64_t last_ack = 0;
  std::size_t max_batch = kMaxBatchEvents;
  std::size_t max_frame = kMaxFrameBytes;
  std::vector<std::string> features;  // empty: the v1 baseline (see namespace features)
  bool has(std::string_view feature) const;
};

// What a call cost, as the caller reported it (feature cost): tokens and an amount in the
// swarm's unit (swarm rule `budget.unit`). Both 0: nothing reported.
struct cost {
  std::uint64_t tokens = 0;
  double amount = 0;
  bool empty() const { return tokens == 0 && amount == 0; }
  cost& operator+=(const cost& o) {
    tokens += o.tokens;
    amount += o.amount;
    return *this;
  }
  friend bool operator==(const cost&, const cost&) = default;
};

// A cost from a caller: an amount that is not a finite number above 0 says nothing about spend
// (0); each part at most what one event may carry.
cost sanitized(const cost& c);

// One judged call: the call and its result, when known. A charge event (feature cost) is no
// call: it adds `spent` to the worker's call with these fingerprints, judged before it
// (the SDK's add_cost after the call was sent).
struct event {
  std::uint64_t seq = 0;  // worker-assigned, 1, 2, 3, ... per incarnation
  std::string tool, summary;
  std::uint64_t exact = 0, structural = 0;
  bool ok = true;
  std::optional<std::uint64_t> result;  // result fingerprint; absent: no result came
  double t = 0;                         // event time, seconds
  struct cost spent;                    // what the call cost (feature cost)
  bool charge = false;                  // a charge event (feature cost)
  std::string peer;  // the worker the call hands work to (feature handoff); empty: none
  friend bool operator==(const event&, const event&) = default;
};

// worker -> daemon. Sequence numbers increase by one within and across batches.
struct events {
  std::vector<event> items;
};

// daemon -> worker: every event up to `seq` is durable.
struct ack {
  std::uint64_t seq = 0;
};

// worker -> daemon: events from..to (inclusive) were dropped by the worker and never come.
struct gap {
  std::uint64_t from = 0, to = 0;
};

// daemon -> every worker of a swarm. Level none lifts an earlier verdict of the fingerprint
// (feature active_verdicts): its counted calls fell below the level.
struct verdict {
  // kind: "exact" | "structural" (a fingerprint: a global dead end), "budget" (the swarm's
  // budget: tool empty, fingerprint 0, calls 0; feature cost), "handoff" (a hand-off cycle
  // between workers: fingerprint names the cycle, calls its hand-offs; feature handoff)
  std::string swarm, tool, kind;
  std::uint64_t fingerprint = 0;
  severity level = severity::warn;
  std::uint32_t calls = 0, workers = 0;
  std::string message;
  double t = 0;
  // Feature cost (empty: nothing reported), in `unit` (the swarm's budget unit; may be empty):
  // what the fingerprint's counted calls cost (a dead end: what it burned), or for kind
  // "budget" what the swarm spent.
  struct cost spent;
  std::string unit;
  // The workers it is for (kind "handoff": the workers of the cycle); empty: every worker of
  // the swarm.
  std::vector<std::string> to;
};

// worker -> daemon: the swarm's task is done, forget it; daemon -> every worker: it was.
struct swarm_complete {
  std::string swarm;
};

// daemon -> worker, then close. `seq`: the event the error is about, when it is about one
// (feature error_seq); the worker drops that event with a gap instead of resending it.
struct error {
  std::string code, message;
  std::optional<std::uint64_t> seq = std::nullopt;
};

// worker -> daemon (feature detections): a local detection of the worker's own manager, for the
// daemon's API. Informational: nothing is counted from it.
struct detection {
  std::string detector;  // a detector id (docs/detectors.md)
  severity level = severity::warn;
  std::uint32_t count = 0;
  std::string tool, message;
  double t = 0;
};

using message =
    std::variant<hello, welcome, events, ack, gap, verdict, swarm_complete, error, detection>;

// The `type` field of each alternative.
std::string_view type_name(const message& m);

// Parses one JSON text frame under json_input.hpp's rules (content strings repaired to valid
// UTF-8; depth and number limits) and json_fields.hpp's (10.0 is an integer; fields not defined
// here are ignored; null is absent). A failure's status carries the code bad_json, bad_message
// or invalid_utf8 (naming the field: `events[0].seq: expected a non-negative integer, got -1`)
// or batch_too_large.
result<message> parse(std::string_view text);

std::string serialize(const message& m);

// Binary form of an event batch (docs/protocol.md, "Binary event batches"): a worker may send
// a batch as a binary frame instead of JSON; same meaning, no parsing of text. encode_binary
// writes LGB1 when no event has a cost or is a charge, else LGB2 (feature cost); decode_binary
// reads both, repairs tool and summary as parse() does and refuses a time that is not finite
// and a cost out of range.
std::string encode_binary(const events& batch);
// Whether `batch` needs the feature cost (an event with a cost, or a charge event), or the
// feature handoff (an event with a peer). Either is written as LGB2.
bool uses_cost(const events& batch);
bool uses_handoff(const events& batch);
result<events> decode_binary(std::string_view bytes);

// The sequence number of the event a failed parse() (JSON frame) or decode_binary() (binary
// frame) of `frame` was about (feature error_seq): when `error` names one event of a batch
// (`events[3].tool: ...`, `binary batch: event 3 ...`) and that event's seq is readable;
// nullopt otherwise. Errors are rare: this reads the frame again.
std::optional<std::uint64_t> failed_event_seq(std::string_view frame, bool binary,
                                              const status& error);

}  // namespace loopguard::protocol
