// protocol::decode_binary on arbitrary bytes, and everything a decoded batch reaches in the
// daemon: swarm_service::ingest, every HTTP view (http_api.hpp's route), the verdicts pushed to
// workers, and shared_economics_state under small swarm rules so global verdicts are reached.
//
// Contract checked: nothing throws; a refusal's message is valid UTF-8; every body, metric text
// and verdict frame is valid UTF-8 and every JSON body parses; a verdict frame parses back as a
// verdict with the same fields; a swarm's detail view names it and disappears after
// swarm_complete; restore(snapshot()) keeps the state's digest.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "loopguard/protocol.hpp"
#include "server/http_api.hpp"
#include "service/daemon_metrics.hpp"
#include "service/swarm_service.hpp"
#include "state/shared_economics_state.hpp"

namespace {

namespace protocol = loopguard::protocol;
namespace daemon = loopguard::daemon;
namespace fuzz = loopguard::fuzz;
using nlohmann::json;

enum { inputs, decoded, applied, verdicts, rendered, kCounters };
fuzz::counters<kCounters> counters("protocol_binary",
                                   {"inputs", "decoded", "applied", "verdicts", "rendered"});

constexpr std::size_t kWorkers = 3;

// Small rules so that a handful of identical events declares a verdict. Checked once.
std::vector<daemon::swarm_rules> make_rule_variants() {
  std::vector<daemon::swarm_rules> out(3);
  out[0].threshold = 2;  // one worker alone suffices, critical soon
  out[0].min_workers = 1;
  out[0].absolute_cap = 4;
  out[0].critical_at = 3;
  out[0].budget.base.tokens = 5000;  // the budget ladder within a few costed events
  out[0].budget.base.unit = "USD";
  out[0].handoff.warn_at = 2;  // hand-off loops soon
  out[0].handoff.critical_at = 3;
  out[1].threshold = 2;  // every call counts; needs two workers; never critical
  out[1].min_workers = 2;
  out[1].progress_aware = false;
  out[1].absolute_cap = 2;
  out[1].critical_at = 0;
  out[2].threshold = 3;  // a short window and the smallest fingerprint cap (evictions)
  out[2].min_workers = 1;
  out[2].window_seconds = 5;
  out[2].absolute_cap = 3;
  out[2].critical_at = 4;
  out[2].max_fingerprints_per_swarm = 16;
  for (const auto& r : out) LG_FUZZ_CHECK(daemon::validate(r).ok(), "harness rules are invalid");
  return out;
}
const std::vector<daemon::swarm_rules> kRules = make_rule_variants();

// The swarm the batch belongs to: the first event's summary when it is an identifier a hello
// could carry, so names with any valid UTF-8 reach the views.
std::string swarm_name(const protocol::events& batch) {
  if (!batch.items.empty()) {
    const std::string& s = batch.items.front().summary;
    if (!s.empty() && s.size() <= protocol::kMaxNameBytes && loopguard::utf8::is_identifier(s)) {
      return s;
    }
  }
  return "swarm-a";
}

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-' ||
        b == '_' || b == '.' || b == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 15]);
    }
  }
  return out;
}

void check_verdict(const protocol::verdict& v) {  // as websocket_session.cpp pushes it
  counters.add(verdicts);
  LG_FUZZ_CHECK(fuzz::valid_utf8(v.tool), "verdict tool is not valid UTF-8");
  LG_FUZZ_CHECK(fuzz::valid_utf8(v.message), "verdict message is not valid UTF-8");
  const std::string frame = protocol::serialize(protocol::message{v});
  LG_FUZZ_CHECK(fuzz::valid_utf8(frame), "verdict frame is not valid UTF-8");
  const auto back = protocol::parse(frame);
  LG_FUZZ_CHECK(back.has_value(), "verdict frame does not parse");
  const auto* pv = std::get_if<protocol::verdict>(&*back);
  LG_FUZZ_CHECK(pv != nullptr, "verdict frame parses as another type");
  LG_FUZZ_CHECK(pv->swarm == v.swarm && pv->tool == v.tool && pv->kind == v.kind &&
                    pv->fingerprint == v.fingerprint && pv->level == v.level &&
                    pv->calls == v.calls && pv->workers == v.workers && pv->message == v.message &&
                    pv->t == v.t && pv->spent == protocol::sanitized(v.spent) &&
                    pv->unit == v.unit && pv->to == v.to,
                "verdict frame parses back to other values");
}

daemon::http_reply get(std::string_view target, const daemon::swarm_service& service,
                       const daemon::daemon_metrics& metrics) {
  daemon::http_reply r = daemon::route("GET", target, service, metrics);
  LG_FUZZ_CHECK(fuzz::valid_utf8(r.body), "HTTP body is not valid UTF-8");
  LG_FUZZ_CHECK(fuzz::valid_utf8(r.content_type), "content type is not valid UTF-8");
  if (r.content_type == "application/json") {
    LG_FUZZ_CHECK(fuzz::parses_as_json(r.body), "JSON body does not parse");
  }
  return r;
}

void render(const daemon::swarm_service& service, const daemon::daemon_metrics& metrics,
            const std::string& swarm, std::string_view raw_target) {
  const auto list = get("/api/swarms", service, metrics);
  LG_FUZZ_CHECK(list.status == 200, "/api/swarms is not 200");
  const auto detail = get("/api/swarms/" + percent_encode(swarm), service, metrics);
  LG_FUZZ_CHECK(detail.status == 200, "the swarm's detail view is not 200");
  const json j = json::parse(detail.body, nullptr, false);
  LG_FUZZ_CHECK(j.is_object() && j.value("swarm", std::string()) == swarm,
                "the detail view does not name its swarm");
  const auto metrics_reply = get("/metrics", service, metrics);
  LG_FUZZ_CHECK(metrics_reply.status == 200, "/metrics is not 200");
  // A target straight from the bytes, as a client may send anything.
  get("/api/swarms/" + std::string(raw_target), service, metrics);
  counters.add(rendered);
}

void ingest_all(const protocol::events& batch, const std::string& swarm) {
  daemon::swarm_service service(kRules[0]);
  daemon::daemon_metrics metrics;
  // The batch as sent, sequence numbers and all: duplicates and gaps are refused politely.
  const auto raw = service.ingest({swarm, "raw", "i0"}, batch.items);
  if (!raw.error.ok()) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(raw.error.message()), "ingest error is not valid UTF-8");
  }
  for (const auto& v : raw.verdicts) check_verdict(v);
  // The same events spread over several workers, renumbered so every one is applied.
  std::vector<std::vector<protocol::event>> per_worker(kWorkers);
  for (std::size_t i = 0; i < batch.items.size(); ++i) {
    auto& mine = per_worker[i % kWorkers];
    mine.push_back(batch.items[i]);
    mine.back().seq = mine.size();
  }
  for (std::size_t w = 0; w < kWorkers; ++w) {
    const auto r = service.ingest({swarm, "w" + std::to_string(w), "i0"}, per_worker[w]);
    LG_FUZZ_CHECK(r.error.ok(), "a gap-free batch was refused");
    LG_FUZZ_CHECK(r.applied == per_worker[w].size(), "a gap-free batch was not applied whole");
    counters.add(applied, r.applied);
    metrics.events_applied += r.applied;
    ++metrics.batches;
    for (const auto& v : r.verdicts) check_verdict(v);
  }
  if (batch.items.empty()) return;  // no swarm exists to render
  const std::string& summary = batch.items.front().summary;
  render(service, metrics, swarm, summary);
  LG_FUZZ_CHECK(service.complete(swarm).has_value(), "swarm_complete of a known swarm failed");
  const auto gone = get("/api/swarms/" + percent_encode(swarm), service, metrics);
  LG_FUZZ_CHECK(gone.status == 404, "a completed swarm is still shown");
}

void apply_direct(const protocol::events& batch, const std::string& swarm) {
  for (const auto& rules : kRules) {
    daemon::shared_economics_state state(rules);
    daemon::swarm_event e;
    e.swarm = swarm;
    for (std::size_t i = 0; i < batch.items.size(); ++i) {
      const auto& ev = batch.items[i];
      e.worker = "w" + std::to_string(i % kWorkers);
      daemon::assign(e, ev);
      for (const auto& v : state.apply(e)) check_verdict(v);
    }
    for (const auto& v : state.verdicts(swarm)) {
      LG_FUZZ_CHECK(fuzz::valid_utf8(v.message), "stored verdict message is not valid UTF-8");
    }
    for (const auto& row : state.top_fingerprints(swarm, 20)) {
      LG_FUZZ_CHECK(fuzz::valid_utf8(row.stats.summary), "stored summary is not valid UTF-8");
    }
    daemon::shared_economics_state copy(rules);
    copy.restore(state.snapshot());
    LG_FUZZ_CHECK(copy.digest() == state.digest(), "restore(snapshot()) changes the digest");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  const auto decoded_batch = protocol::decode_binary(fuzz::as_view(data, size));
  if (!decoded_batch) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(decoded_batch.error().message()),
                  "decode error is not valid UTF-8");
    return 0;
  }
  const protocol::events& batch = *decoded_batch;
  counters.add(decoded);
  for (const auto& ev : batch.items) {
    LG_FUZZ_CHECK(fuzz::valid_utf8(ev.tool) && ev.tool.size() <= protocol::kMaxToolBytes,
                  "decoded tool is not valid UTF-8 within the limit");
    LG_FUZZ_CHECK(fuzz::valid_utf8(ev.summary) && ev.summary.size() <= protocol::kMaxSummaryBytes,
                  "decoded summary is not valid UTF-8 within the limit");
    LG_FUZZ_CHECK(
        loopguard::utf8::is_identifier(ev.peer) && ev.peer.size() <= protocol::kMaxNameBytes,
        "decoded peer is not a worker name");
    LG_FUZZ_CHECK(ev.spent.tokens <= protocol::kMaxEventTokens && ev.spent.amount >= 0 &&
                      ev.spent.amount <= protocol::kMaxEventAmount,
                  "decoded cost is out of range");
  }
  const std::string swarm = swarm_name(batch);
  ingest_all(batch, swarm);
  apply_direct(batch, swarm);
  return 0;
}
