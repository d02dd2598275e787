#include "loopguard/protocol.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "loopguard/hex.hpp"
#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::protocol {
namespace {

using nlohmann::json;

using json_fields::object;
using json_fields::required;

// The rules of every frame: other fields are ignored, null is absent, errors are bad_message
// (invalid_utf8 for an identifier).
constexpr json_fields::options kFrameRules{.name = "message",
                                           .unknown = json_fields::unknown_keys::ignore,
                                           .null_is_absent = true,
                                           .code = codes::bad_message,
                                           .identifier_code = codes::invalid_utf8};

// A fingerprint: 16 hex digits.
void read_fp(object& x, json_fields::key k, std::optional<std::uint64_t>& out) {
  json_fields::key optional = k;  // the error for an absent one is read_fp's own
  optional.required = false;
  const json* v = x.value(optional);
  if (v == nullptr) {
    if (k.required) x.fail_message(k.path, "expected 16 hex digits, got nothing");
    return;
  }
  const auto parsed = v->is_string() ? from_hex(v->get_ref<const std::string&>()) : std::nullopt;
  if (!parsed) return x.fail(k.path, "16 hex digits", *v);
  out = parsed;
}

void read_fp(object& x, std::string_view key, std::uint64_t& out) {
  std::optional<std::uint64_t> v;
  read_fp(x, required(key), v);
  if (v) out = *v;
}

// A required identifier that is not empty (swarm, worker, incarnation).
void read_name(object& x, std::string_view key, std::string& out) {
  if (x.identifier(required(key), out, kMaxNameBytes) && out.empty()) {
    x.fail(key, "a non-empty string", json(out));
  }
}

int read_version(object& x) {
  std::uint64_t version = 0;
  x.integer(required("version"), version);
  return version > 1000 ? 1000 : static_cast<int>(version);
}

// An optional cost object: {"tokens": N, "amount": X}, each optional, neither negative.
void read_cost(object& x, std::string_view key, cost& out) {
  if (!x.has(key)) return;
  object c = x.member(key);
  c.integer("tokens", out.tokens, 0, kMaxEventTokens);
  c.number("amount", out.amount, 0, kMaxEventAmount);
}

// A sum (a verdict's wasted cost) may pass what one event may carry, and read_cost takes no more:
// written saturated at those limits, so that every frame sent parses.
json cost_json(const cost& c) {
  const cost s = sanitized(c);
  return {{"tokens", s.tokens}, {"amount", s.amount}};
}

void parse_event(object x, event& e) {
  // Sequence numbers start at 1: 0 is what a worker that sent nothing has acknowledged.
  x.integer(required("seq"), e.seq, 1, std::numeric_limits<std::uint64_t>::max());
  x.string(required("tool"), e.tool, kMaxToolBytes);
  x.string("summary", e.summary, kMaxSummaryBytes);
  read_fp(x, "exact", e.exact);
  read_fp(x, "structural", e.structural);
  x.boolean("ok", e.ok);
  read_fp(x, "result", e.result);
  x.number(required("t"), e.t);  // finite: json_input refuses numbers beyond a double's range
  read_cost(x, "cost", e.spent);
  x.boolean("charge", e.charge);
  // A worker name, but per event: a bad one refuses the event (bad_message), not the worker.
  if (x.string("peer", e.peer, kMaxNameBytes) && !utf8::is_identifier(e.peer)) {
    x.fail_message("peer", "expected a worker name (valid UTF-8 without U+FFFD)");
  }
}

void parse_hello(object& r, message& out) {
  hello m;
  m.version = read_version(r);
  read_name(r, "swarm", m.swarm);
  read_name(r, "worker", m.worker);
  read_name(r, "incarnation", m.incarnation);
  r.identifier("token", m.token, kMaxNameBytes);
  std::string mode;
  r.string("mode", mode, kMaxNameBytes);
  m.observing = mode == features::observe;
  out = std::move(m);
}

void parse_welcome(object& r, message& out) {
  welcome m;
  m.version = read_version(r);
  r.integer(required("last_ack"), m.last_ack);
  std::uint64_t max_batch = 0, max_frame = 0;
  r.integer("max_batch", max_batch);
  r.integer("max_frame", max_frame);
  if (max_batch) m.max_batch = static_cast<std::size_t>(max_batch);
  if (max_frame) m.max_frame = static_cast<std::size_t>(max_frame);
  r.strings("features", m.features);
  out = std::move(m);
}

void parse_events(object& r, message& out) {
  const json* list = r.array(required("events"));
  if (list == nullptr) return;
  if (list->size() > kMaxBatchEvents) {
    return r.fail_message("events",
                          "a batch holds at most " + std::to_string(kMaxBatchEvents) +
                              " events, got " + std::to_string(list->size()),
                          codes::batch_too_large);
  }
  events m;
  m.items.resize(list->size());
  for (std::size_t i = 0; i < list->size() && r.ok(); ++i)
    parse_event(r.item(list, "events", i), m.items[i]);
  out = std::move(m);
}

void parse_ack(object& r, message& out) {
  ack m;
  r.integer(required("seq"), m.seq);
  out = m;
}

void parse_gap(object& r, message& out) {
  gap m;
  r.integer(required("from"), m.from);
  r.integer(required("to"), m.to);
  out = m;
}

void parse_verdict(object& r, message& out) {
  verdict m;
  r.identifier(required("swarm"), m.swarm, kMaxNameBytes);
  r.string(required("tool"), m.tool, kMaxToolBytes);
  r.identifier(required("kind"), m.kind, 16);
  read_fp(r, "fingerprint", m.fingerprint);
  r.one_of(required("level"), m.level,
           {json_fields::choice<severity>{"warn", severity::warn},
            json_fields::choice<severity>{"critical", severity::critical},
            json_fields::choice<severity>{"terminate", severity::terminate},
            json_fields::choice<severity>{"none", severity::none}});
  r.integer(required("calls"), m.calls);
  r.integer(required("workers"), m.workers);
  r.string(required("message"), m.message, kMaxFrameBytes);
  r.number(required("t"), m.t);
  read_cost(r, "cost", m.spent);
  r.string("unit", m.unit, kMaxNameBytes);
  r.strings("to", m.to);
  out = std::move(m);
}

void parse_swarm_complete(object& r, message& out) {
  swarm_complete m;
  r.identifier("swarm", m.swarm, kMaxNameBytes);
  out = std::move(m);
}

void read_seq(object& r, std::optional<std::uint64_t>& out) {
  std::uint64_t seq = 0;
  if (r.integer("seq", seq)) out = seq;
}

void parse_error(object& r, message& out) {
  error m;
  r.identifier(required("code"), m.code, kMaxNameBytes);
  r.string("message", m.message, kMaxFrameBytes);
  read_seq(r, m.seq);
  out = std::move(m);
}

void parse_detection(object& r, message& out) {
  detection m;
  r.identifier(required("detector"), m.detector, 32);
  r.one_of(required("level"), m.level,
           {json_fields::choice<severity>{"warn", severity::warn},
            json_fields::choice<severity>{"critical", severity::critical},
            json_fields::choice<severity>{"terminate", severity::terminate}});
  r.integer("count", m.count);
  r.string("tool", m.tool, kMaxToolBytes);
  r.string("message", m.message, kMaxDetectionMessageBytes);
  r.number(required("t"), m.t);
  out = std::move(m);
}

struct message_type {
  std::string_view name;
  void (*parse)(object&, message&);
};
constexpr message_type kTypes[] = {{"hello", parse_hello},
                                   {"welcome", parse_welcome},
                                   {"events", parse_events},
                                   {"ack", parse_ack},
                                   {"gap", parse_gap},
                                   {"verdict", parse_verdict},
                                   {"swarm_complete", parse_swarm_complete},
                                   {"error", parse_error},
                                   {"detection", parse_detection}};

result<message> parse_object(const json& j) {
  json_fields::reader r(j, kFrameRules);
  std::string type;
  r.identifier(required("type"), type, kMaxNameBytes);
  message out;
  if (r.ok()) {
    const auto* t = std::find_if(std::begin(kTypes), std::end(kTypes),
                                 [&](const message_type& x) { return x.name == type; });
    if (t == std::end(kTypes)) {
      r.fail("type",
             "one of hello, welcome, events, ack, gap, verdict, swarm_complete, error, detection",
             json(type));
    } else {
      t->parse(r, out);
    }
  }
  if (!r.ok()) return r.first_error();
  return out;
}

struct to_json_visitor {
  json operator()(const hello& m) const {
    json j{{"type", "hello"},
           {"version", m.version},
           {"swarm", m.swarm},
           {"worker", m.worker},
           {"incarnation", m.incarnation}};
    if (!m.token.empty()) j["token"] = m.token;
    if (m.observing) j["mode"] = features::observe;
    return j;
  }
  json operator()(const welcome& m) const {
    json j{{"type", "welcome"},
           {"version", m.version},
           {"last_ack", m.last_ack},
           {"max_batch", m.max_batch},
           {"max_frame", m.max_frame}};
    if (!m.features.empty()) j["features"] = m.features;
    return j;
  }
  json operator()(const events& m) const {
    json list = json::array();
    for (const auto& e : m.items) {
      json x{{"seq", e.seq},
             {"tool", e.tool},
             {"exact", to_hex(e.exact)},
             {"structural", to_hex(e.structural)},
             {"ok", e.ok},
             {"t", e.t}};
      if (!e.summary.empty()) x["summary"] = e.summary;
      if (e.result) x["result"] = to_hex(*e.result);
      if (!e.spent.empty()) x["cost"] = cost_json(e.spent);
      if (e.charge) x["charge"] = true;
      if (!e.peer.empty()) x["peer"] = e.peer;
      list.push_back(std::move(x));
    }
    return {{"type", "events"}, {"events", std::move(list)}};
  }
  json operator()(const ack& m) const { return {{"type", "ack"}, {"seq", m.seq}}; }
  json operator()(const gap& m) const { return {{"type", "gap"}, {"from", m.from}, {"to", m.to}}; }
  json operator()(const verdict& m) const {
    json j{{"type", "verdict"},
           {"swarm", m.swarm},
           {"tool", m.tool},
           {"kind", m.kind},
           {"fingerprint", to_hex(m.fingerprint)},
           {"level", std::string(to_string(m.level))},
           {"calls", m.calls},
           {"workers", m.workers},
           {"message", m.message},
           {"t", m.t}};
    if (!m.spent.empty()) j["cost"] = cost_json(m.spent);
    if (!m.unit.empty()) j["unit"] = m.unit;
    if (!m.to.empty()) j["to"] = m.to;
    return j;
  }
  json operator()(const swarm_complete& m) const {
    return {{"type", "swarm_complete"}, {"swarm", m.swarm}};
  }
  json operator()(const error& m) const {
    json j{{"type", "error"}, {"code", m.code}, {"message", m.message}};
    if (m.seq) j["seq"] = *m.seq;
    return j;
  }
  json operator()(const detection& m) const {
    json j{{"type", "detection"},
           {"detector", m.detector},
           {"level", std::string(to_string(m.level))},
           {"count", m.count},
           {"t", m.t}};
    if (!m.tool.empty()) j["tool"] = m.tool;
    if (!m.message.empty()) j["message"] = m.message;
    return j;
  }
};

// Little-endian fixed-width fields of the binary batch.
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u16(std::string& out, std::size_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>((v >> 8) & 0xff));
}

class byte_reader {
 public:
  explicit byte_reader(std::string_view b) : b_(b) {}
  bool u64(std::uint64_t& v) {
    if (b_.size() - pos_ < 8) return false;
    v = 0;
    for (int i = 7; i >= 0; --i) {
      v = (v << 8) | static_cast<unsigned char>(b_[pos_ + static_cast<std::size_t>(i)]);
    }
    pos_ += 8;
    return true;
  }
  bool u8(unsigned& v) {
    if (pos_ >= b_.size()) return false;
    v = static_cast<unsigned char>(b_[pos_++]);
    return true;
  }
  bool str(std::string& s, std::size_t max) {
    unsigned lo = 0, hi = 0;
    if (!u8(lo) || !u8(hi)) return false;
    const std::size_t n = lo | (hi << 8);
    if (n > max || b_.size() - pos_ < n) return false;
    s.assign(b_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::string_view b_;
  std::size_t pos_ = 0;
};

constexpr std::string_view kBinaryMagic = "LGB1";
constexpr std::string_view kBinaryMagicCost = "LGB2";  // each event also has tokens and amount
constexpr unsigned kFlagOk = 1, kFlagResult = 2, kFlagCharge = 4;

// 1 or 2 for a frame that starts with a batch magic; 0 otherwise.
int binary_version(std::string_view bytes) {
  const auto magic = bytes.substr(0, kBinaryMagic.size());
  return magic == kBinaryMagic ? 1 : magic == kBinaryMagicCost ? 2 : 0;
}

// The N of an error message that begins with `prefix` N.
std::optional<std::size_t> index_after(std::string_view message, std::string_view prefix) {
  if (!message.starts_with(prefix)) return std::nullopt;
  message.remove_prefix(prefix.size());
  std::size_t n = 0, digits = 0;
  for (; digits < message.size() && digits < 10; ++digits) {
    const char c = message[digits];
    if (c < '0' || c > '9') break;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  if (digits == 0) return std::nullopt;
  return n;
}

std::optional<std::uint64_t> json_event_seq(std::string_view text, std::size_t index) {
  const auto doc = json_input::parse(text, json_input::keys::unique);
  if (!doc) return std::nullopt;
  json_fields::reader r(doc->value, kFrameRules);
  const json* list = r.array("events");
  if (list == nullptr || index >= list->size()) return std::nullopt;
  std::uint64_t seq = 0;
  if (!r.item(list, "events", index).integer(required("seq"), seq)) return std::nullopt;
  return seq == 0 ? std::nullopt : std::optional(seq);  // no event 0 for a worker to drop
}

// Event `index` of a binary batch starts after the events before it, which decoded.
std::optional<std::uint64_t> binary_event_seq(std::string_view bytes, std::size_t index) {
  const int version = binary_version(bytes);
  if (version == 0) return std::nullopt;
  byte_reader r(bytes.substr(kBinaryMagic.size()));
  std::uint64_t n = 0, skip = 0;
  unsigned flags = 0;
  std::string s;
  if (!r.u64(n) || index >= n) return std::nullopt;
  for (std::size_t i = 0; i < index; ++i) {
    for (int k = 0; k < 5; ++k) {
      if (!r.u64(skip)) return std::nullopt;
    }
    if (!r.u8(flags) || !r.str(s, kMaxToolBytes) || !r.str(s, kMaxSummaryBytes)) {
      return std::nullopt;
    }
    if (version == 2 && (!r.u64(skip) || !r.u64(skip) || !r.str(s, kMaxNameBytes))) {
      return std::nullopt;
    }
  }
  std::uint64_t seq = 0;
  if (!r.u64(seq) || seq == 0) return std::nullopt;  // no event 0 for a worker to drop
  return seq;
}

}  // namespace

cost sanitized(const cost& c) {
  cost out;
  out.tokens = std::min(c.tokens, kMaxEventTokens);
  if (std::isfinite(c.amount) && c.amount > 0) out.amount = std::min(c.amount, kMaxEventAmount);
  return out;
}

bool welcome::has(std::string_view feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

std::string_view type_name(const message& m) {
  static constexpr std::string_view kNames[] = {"hello",    "welcome", "events",         "ack",
                                                "gap",      "verdict", "swarm_complete", "error",
                                                "detection"};
  return kNames[m.index()];
}

result<message> parse(std::string_view text) {
  // A repeated key is valid JSON, but a frame that says two things is refused: nlohmann keeps
  // the last, and {"type":"events","type":"hello"} could read differently elsewhere.
  const auto doc = json_input::parse(text, json_input::keys::unique);
  if (!doc) {
    if (doc.error().code() == json_input::kDuplicateKey) {
      return status::error(codes::bad_message, doc.error().message());
    }
    return status::error(codes::bad_json, "the frame is not valid JSON: " + doc.error().message());
  }
  return parse_object(doc->value);
}

std::string serialize(const message& m) {
  return json_input::dump(std::visit(to_json_visitor{}, m));
}

bool uses_cost(const events& batch) {
  return std::any_of(batch.items.begin(), batch.items.end(),
                     [](const event& e) { return e.charge || !e.spent.empty(); });
}

bool uses_handoff(const events& batch) {
  return std::any_of(batch.items.begin(), batch.items.end(),
                     [](const event& e) { return !e.peer.empty(); });
}

std::string encode_binary(const events& batch) {
  const bool costs = uses_cost(batch) || uses_handoff(batch);
  std::string out(costs ? kBinaryMagicCost : kBinaryMagic);
  put_u64(out, batch.items.size());
  for (const auto& e : batch.items) {
    put_u64(out, e.seq);
    put_u64(out, e.exact);
    put_u64(out, e.structural);
    put_u64(out, e.result.value_or(0));
    put_u64(out, std::bit_cast<std::uint64_t>(e.t));
    out.push_back(static_cast<char>((e.ok ? kFlagOk : 0) | (e.result ? kFlagResult : 0) |
                                    (e.charge ? kFlagCharge : 0)));
    put_u16(out, e.tool.size());
    out += e.tool;
    put_u16(out, e.summary.size());
    out += e.summary;
    if (costs) {
      put_u64(out, e.spent.tokens);
      put_u64(out, std::bit_cast<std::uint64_t>(e.spent.amount));
      put_u16(out, e.peer.size());
      out += e.peer;
    }
  }
  return out;
}

result<events> decode_binary(std::string_view bytes) {
  const auto bad = [](const std::string& what) {
    return status::error(codes::bad_message, "binary batch: " + what);
  };
  const int version = binary_version(bytes);
  if (version == 0) return bad("bad magic (expected LGB1 or LGB2)");
  byte_reader r(bytes.substr(kBinaryMagic.size()));
  std::uint64_t n = 0;
  if (!r.u64(n)) return bad("truncated header");
  if (n > kMaxBatchEvents) {
    return status::error(codes::batch_too_large, "binary batch: a batch holds at most " +
                                                     std::to_string(kMaxBatchEvents) +
                                                     " events, got " + std::to_string(n));
  }
  events out;
  out.items.resize(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < out.items.size(); ++i) {
    event& e = out.items[i];
    std::uint64_t result = 0, t = 0;
    unsigned flags = 0;
    if (!r.u64(e.seq) || !r.u64(e.exact) || !r.u64(e.structural) || !r.u64(result) || !r.u64(t) ||
        !r.u8(flags) || !r.str(e.tool, kMaxToolBytes) || !r.str(e.summary, kMaxSummaryBytes)) {
      return bad("event " + std::to_string(i) + " is truncated or too long");
    }
    if (e.seq == 0) return bad("event " + std::to_string(i) + ": seq must be at least 1");
    e.t = std::bit_cast<double>(t);
    if (!std::isfinite(e.t)) {
      return bad("event " + std::to_string(i) + ": t must be a finite number of seconds");
    }
    if (version == 2) {
      std::uint64_t amount = 0;
      if (!r.u64(e.spent.tokens) || !r.u64(amount) || !r.str(e.peer, kMaxNameBytes)) {
        return bad("event " + std::to_string(i) + " is truncated or too long");
      }
      if (!utf8::is_identifier(e.peer)) {
        return bad("event " + std::to_string(i) +
                   ": peer is not a worker name (valid UTF-8 without U+FFFD)");
      }
      e.spent.amount = std::bit_cast<double>(amount);
      if (e.spent.tokens > kMaxEventTokens ||
          !(e.spent.amount >= 0 && e.spent.amount <= kMaxEventAmount)) {
        return bad("event " + std::to_string(i) + ": cost must be at most " +
                   std::to_string(kMaxEventTokens) + " tokens and an amount in 0..1e12");
      }
    }
    // Content is repaired, as in JSON frames; what the repair lengthened past the limit is cut
    // at a code-point boundary.
    if (utf8::repair_in_place(e.tool) > 0) e.tool.resize(utf8::cut_point(e.tool, kMaxToolBytes));
    if (utf8::repair_in_place(e.summary) > 0) {
      e.summary.resize(utf8::cut_point(e.summary, kMaxSummaryBytes));
    }
    e.ok = (flags & kFlagOk) != 0;
    e.result = (flags & kFlagResult) ? std::optional<std::uint64_t>(result) : std::nullopt;
    e.charge = version == 2 && (flags & kFlagCharge) != 0;
  }
  if (!r.done()) return bad("trailing bytes");
  return out;
}

std::optional<std::uint64_t> failed_event_seq(std::string_view frame, bool binary,
                                              const status& error) {
  const std::string said = error.message();
  const auto index = index_after(said, binary ? "binary batch: event " : "events[");
  if (!index) return std::nullopt;
  return binary ? binary_event_seq(frame, *index) : json_event_seq(frame, *index);
}

}  // namespace loopguard::protocol
