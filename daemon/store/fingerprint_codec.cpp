#include "store/fingerprint_codec.hpp"

#include "store/byte_codec.hpp"

namespace loopguard::daemon {
namespace {

constexpr std::size_t kWindowCallBytes = 13;  // t (8), worker (4), counted (1)
constexpr std::uint8_t kMaxLevel = 3;

}  // namespace

void encode_fingerprint(const fingerprint_stats& f, std::string& out) {
  out.clear();
  byte_writer w(out);
  w.put(static_cast<std::uint8_t>(f.level));
  w.put(f.calls);
  w.put(f.counted);
  w.put(f.first_seen);
  w.put(f.last_seen);
  w.put(f.level_t);
  w.put(f.level_calls);
  w.put(f.level_workers);
  w.str(f.tool);
  w.str(f.summary);
  w.put(static_cast<std::uint32_t>(f.workers.size()));
  w.put(static_cast<std::uint32_t>(f.window.size()));
  w.put(static_cast<std::uint32_t>(f.results.size()));
  for (auto id : f.workers) w.put(id);
  for (const auto& c : f.window) {
    w.put(c.t);
    w.put(c.worker);
    w.put(static_cast<std::uint8_t>(c.counted ? 1 : 0));
  }
  for (auto r : f.results) w.put(r);
  w.put(f.wasted.tokens);
  w.put(f.wasted.amount);
  w.put(f.booked.tokens);
  w.put(f.booked.amount);
}

bool decode_fingerprint(std::string_view blob, fingerprint_stats& f) {
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
