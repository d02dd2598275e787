#include "store/fingerprint_codec.hpp"

#include "state/shared_economics_state.hpp"
#include "state/swarm_rules.hpp"
#include "store/byte_codec.hpp"

namespace loopguard::daemon {
namespace {

constexpr std::size_t kWindowCallBytes = 13;  // format 1: t (8), worker (4), counted (1)
constexpr std::uint8_t kMaxLevel = 3;
// Format 2 begins with kCompact | level: a format-1 blob begins with the level itself (0..3).
constexpr std::uint8_t kCompact = 0xC0;
constexpr std::uint8_t kLevelBits = 0x03;
// Format 2's flags byte: the fields present.
constexpr std::uint8_t kLastSeen = 1;  // last_seen differs from first_seen
constexpr std::uint8_t kReport = 2;    // level_t, level_calls, level_workers (not all zero)
constexpr std::uint8_t kWasted = 4;
constexpr std::uint8_t kBooked = 8;
constexpr std::uint8_t kKnownFlags = kLastSeen | kReport | kWasted | kBooked;
// A window call's tag byte: counted, and whether its time is the row's last_seen.
constexpr std::uint8_t kCounted = 1;
constexpr std::uint8_t kAtLastSeen = 2;
constexpr std::uint8_t kKnownTags = kCounted | kAtLastSeen;
// The longest lists a state holds (swarm_rules::max_window_calls at most, the distinct results
// a fingerprint keeps).
constexpr std::uint64_t kMaxWindowCalls = swarm_rules::kMaxWindowCallsLimit;
constexpr std::uint64_t kMaxResults = shared_economics_state::kMaxResultsPerFingerprint;

void put_cost(byte_writer& w, const protocol::cost& c) {
  w.varint(c.tokens);
  w.put(c.amount);
}

bool get_cost(byte_reader& r, protocol::cost& c) {
  return r.varint(c.tokens) && r.get(c.amount);
}

// Format 1 (schemas 2 to 7): fixed width.
bool decode_fixed(std::string_view blob, fingerprint_stats& f) {
  byte_reader r(blob);
  std::uint8_t level = 0;
  std::uint32_t workers = 0, window = 0, results = 0;
  std::string_view tool, summary, a, b, c;
  if (!r.get(level) || level > kMaxLevel || !r.get(f.calls) || !r.get(f.counted) ||
      !r.get(f.first_seen) || !r.get(f.last_seen) || !r.get(f.level_t) || !r.get(f.level_calls) ||
      !r.get(f.level_workers) || !r.str(tool) || !r.str(summary) || !r.get(workers) ||
      !r.get(window) || !r.get(results) || !r.take(workers, 4, a) ||
      !r.take(window, kWindowCallBytes, b) || !r.take(results, 8, c) || !r.get(f.wasted.tokens) ||
      !r.get(f.wasted.amount) || !r.get(f.booked.tokens) || !r.get(f.booked.amount) ||
      !r.at_end()) {
    return false;
  }
  f.level = static_cast<severity>(level);
  f.tool = tool;
  f.summary = summary;
  f.workers.resize(workers);
  if (workers) std::memcpy(f.workers.data(), a.data(), a.size());
  f.window.resize(window);
  byte_reader calls(b);
  for (auto& call : f.window) {
    std::uint8_t counted = 0;
    calls.get(call.t);
    calls.get(call.worker);
    calls.get(counted);
    call.counted = counted != 0;
  }
  f.results.resize(results);
  if (results) std::memcpy(f.results.data(), c.data(), c.size());
  return true;
}

// Format 2: the flags' fields, the lists' worker ids and window calls, after the header.
bool decode_lists(byte_reader& r, fingerprint_stats& f) {
  std::uint64_t workers = 0, window = 0, results = 0;
  // Each worker id takes a byte at least, each window call two, each result eight; a window or
  // results list longer than any state holds is refused before anything is sized (a window call
  // of two bytes becomes sixteen in memory).
  if (!r.varint(workers) || workers > r.left()) return false;
  f.workers.resize(workers);
  for (auto& id : f.workers) {
    if (!r.varint_as(id)) return false;
  }
  if (!r.varint(window, kMaxWindowCalls) || window > r.left() / 2) return false;
  f.window.resize(window);
  for (auto& call : f.window) {
    std::uint8_t tag = 0;
    if (!r.get(tag) || (tag & ~kKnownTags) != 0) return false;
    call.counted = (tag & kCounted) != 0;
    call.t = f.last_seen;
    if ((tag & kAtLastSeen) == 0 && !r.get(call.t)) return false;
    if (!r.varint_as(call.worker)) return false;
  }
  std::string_view c;
  if (!r.varint(results, kMaxResults) || !r.take(results, 8, c)) return false;
  f.results.resize(results);
  if (results) std::memcpy(f.results.data(), c.data(), c.size());
  return true;
}

bool decode_compact(std::string_view blob, fingerprint_stats& f) {
  byte_reader r(blob);
  std::uint8_t head = 0, flags = 0;
  std::string_view tool, summary;
  if (!r.get(head) || !r.get(flags) || (flags & ~kKnownFlags) != 0 || !r.varint(f.calls) ||
      !r.varint(f.counted) || !r.get(f.first_seen)) {
    return false;
  }
  f.level = static_cast<severity>(head & kLevelBits);
  f.last_seen = f.first_seen;
  f.level_t = 0;
  f.level_calls = f.level_workers = 0;
  f.wasted = f.booked = {};
  if (((flags & kLastSeen) && !r.get(f.last_seen)) ||
      ((flags & kReport) &&
       (!r.get(f.level_t) || !r.varint_as(f.level_calls) || !r.varint_as(f.level_workers))) ||
      !r.varstr(tool) || !r.varstr(summary) || !decode_lists(r, f) ||
      ((flags & kWasted) && !get_cost(r, f.wasted)) ||
      ((flags & kBooked) && !get_cost(r, f.booked)) || !r.at_end()) {
    return false;
  }
  f.tool = tool;
  f.summary = summary;
  return true;
}

}  // namespace

void encode_fingerprint(const fingerprint_stats& f, std::string& out) {
  out.clear();
  byte_writer w(out);
  const bool last = !same_bits(f.last_seen, f.first_seen);
  // Bit for bit: a field left out decodes as +0.
  const bool report = !same_bits(f.level_t, 0) || f.level_calls != 0 || f.level_workers != 0;
  const bool wasted = f.wasted.tokens != 0 || !same_bits(f.wasted.amount, 0);
  const bool booked = f.booked.tokens != 0 || !same_bits(f.booked.amount, 0);
  w.put(static_cast<std::uint8_t>(kCompact | static_cast<std::uint8_t>(f.level)));
  w.put(static_cast<std::uint8_t>((last ? kLastSeen : 0) | (report ? kReport : 0) |
                                  (wasted ? kWasted : 0) | (booked ? kBooked : 0)));
  w.varint(f.calls);
  w.varint(f.counted);
  w.put(f.first_seen);
  if (last) w.put(f.last_seen);
  if (report) {
    w.put(f.level_t);
    w.varint(f.level_calls);
    w.varint(f.level_workers);
  }
  w.varstr(f.tool);
  w.varstr(f.summary);
  w.varint(f.workers.size());
  for (auto id : f.workers) w.varint(id);
  w.varint(f.window.size());
  for (const auto& c : f.window) {
    const bool at_last = same_bits(c.t, f.last_seen);
    w.put(static_cast<std::uint8_t>((c.counted ? kCounted : 0) | (at_last ? kAtLastSeen : 0)));
    if (!at_last) w.put(c.t);
    w.varint(c.worker);
  }
  w.varint(f.results.size());
  for (auto r : f.results) w.put(r);
  if (wasted) put_cost(w, f.wasted);
  if (booked) put_cost(w, f.booked);
}

bool decode_fingerprint(std::string_view blob, fingerprint_stats& f) {
  if (!blob.empty() && (static_cast<std::uint8_t>(blob.front()) & ~kLevelBits) == kCompact) {
    return decode_compact(blob, f);
  }
  return decode_fixed(blob, f);
}

void encode_handoffs(const std::vector<handoff>& hs, std::string& out) {
  out.clear();
  if (hs.empty()) return;
  byte_writer w(out);
  w.put(static_cast<std::uint32_t>(hs.size()));
  for (const handoff& h : hs) {
    w.put(h.t);
    w.put(h.fingerprint);
    w.put(h.spent.tokens);
    w.put(h.spent.amount);
    w.str(h.from);
    w.str(h.peer);
    w.str(h.tool);
  }
}

bool decode_handoffs(std::string_view blob, std::vector<handoff>& out) {
  out.clear();
  if (blob.empty()) return true;
  byte_reader r(blob);
  std::uint32_t n = 0;
  if (!r.get(n) || n > handoff_log::kMaxKept) return false;
  out.resize(n);
  for (handoff& h : out) {
    std::string_view from, peer, tool;
    if (!r.get(h.t) || !r.get(h.fingerprint) || !r.get(h.spent.tokens) || !r.get(h.spent.amount) ||
        !r.str(from) || !r.str(peer) || !r.str(tool)) {
      return false;
    }
    h.from = from;
    h.peer = peer;
    h.tool = tool;
  }
  return r.at_end();
}

}  // namespace loopguard::daemon
