#include "loopguard/protocol.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "loopguard/hex.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::protocol {
namespace {

using nlohmann::json;

// Reads the fields of one message, stopping at the first problem with a message naming it.
class reader {
 public:
  explicit reader(const json& j, std::string prefix = "") : j_(j), prefix_(std::move(prefix)) {}

  std::optional<error>& err() { return err_; }

  const json* field(std::string_view key, bool required) {
    if (err_) return nullptr;
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (required) fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  void str(std::string_view key, std::string& out, std::size_t max, bool required = true) {
    const json* v = field(key, required);
    if (!v) return;
    if (!v->is_string()) return fail(key, "must be a string");
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > max) return fail(key, "is longer than " + std::to_string(max) + " bytes");
    out = s;
  }
  // An identifier: refused with invalid_utf8 when it is not valid UTF-8 (it was repaired on the
  // way in, so it holds U+FFFD), never repaired.
  void identifier(std::string_view key, std::string& out, std::size_t max, bool required = true) {
    str(key, out, max, required);
    if (!err_ && !utf8::is_identifier(out)) {
      err_ = error{std::string(codes::invalid_utf8),
                   prefix_ + std::string(key) +
                       " is not valid UTF-8 (an identifier may not hold invalid bytes, lone "
                       "surrogates or U+FFFD)"};
    }
  }
  void name(std::string_view key, std::string& out) {
    identifier(key, out, kMaxNameBytes);
    if (!err_ && out.empty()) fail(key, "must not be empty");
  }
  void u64(std::string_view key, std::uint64_t& out, bool required = true) {
    const json* v = field(key, required);
    if (!v) return;
    if (v->is_number_unsigned()) {
      out = v->get<std::uint64_t>();
    } else if (v->is_number_integer() && v->get<std::int64_t>() >= 0) {
      out = static_cast<std::uint64_t>(v->get<std::int64_t>());
    } else {
      fail(key, "must be a non-negative integer");
    }
  }
  void u32(std::string_view key, std::uint32_t& out) {
    std::uint64_t v = 0;
    u64(key, v);
    if (err_) return;
    if (v > std::numeric_limits<std::uint32_t>::max()) return fail(key, "is too large");
    out = static_cast<std::uint32_t>(v);
  }
  void num(std::string_view key, double& out, bool required = true) {
    const json* v = field(key, required);
    if (!v) return;
    if (!v->is_number()) return fail(key, "must be a number");
    out = v->get<double>();  // finite: json_input refuses numbers beyond a double's range
  }
  void boolean(std::string_view key, bool& out, bool required = true) {
    const json* v = field(key, required);
    if (!v) return;
    if (!v->is_boolean()) return fail(key, "must be true or false");
    out = v->get<bool>();
  }
  void fp(std::string_view key, std::uint64_t& out) {
    std::optional<std::uint64_t> v;
    opt_fp(key, v, true);
    if (v) out = *v;
  }
  void opt_fp(std::string_view key, std::optional<std::uint64_t>& out, bool required = false) {
    const json* v = field(key, required);
    if (!v) return;
    const auto parsed = v->is_string() ? from_hex(v->get_ref<const std::string&>()) : std::nullopt;
    if (!parsed) return fail(key, "must be 16 hex digits");
    out = parsed;
  }
  void fail(std::string_view key, const std::string& what) {
    if (!err_)
      err_ = error{std::string(codes::bad_message), prefix_ + std::string(key) + " " + what};
  }

 private:
  const json& j_;
  std::string prefix_;
  std::optional<error> err_;
};

std::optional<error> parse_event(const json& j, std::size_t i, event& e) {
  if (!j.is_object()) {
    return error{std::string(codes::bad_message),
                 "events[" + std::to_string(i) + "] must be an object"};
  }
  reader r(j, "events[" + std::to_string(i) + "].");
  r.u64("seq", e.seq);
  r.str("tool", e.tool, kMaxToolBytes);
  r.str("summary", e.summary, kMaxSummaryBytes, false);
  r.fp("exact", e.exact);
  r.fp("structural", e.structural);
  r.boolean("ok", e.ok, false);
  r.opt_fp("result", e.result);
  r.num("t", e.t);
  return r.err();
}

std::optional<error> parse_object(const json& j, message& out) {
  if (!j.is_object())
    return error{std::string(codes::bad_message), "a message must be a JSON object"};
  const auto type_it = j.find("type");
  if (type_it == j.end() || !type_it->is_string()) {
    return error{std::string(codes::bad_message), "type is missing or not a string"};
  }
  const std::string& type = type_it->get_ref<const std::string&>();
  if (!utf8::is_identifier(type)) {
    return error{std::string(codes::invalid_utf8), "type is not valid UTF-8"};
  }
  reader r(j);
  if (type == "hello") {
    hello m;
    std::uint64_t version = 0;
    r.u64("version", version);
    m.version = version > 1000 ? 1000 : static_cast<int>(version);
    r.name("swarm", m.swarm);
    r.name("worker", m.worker);
    r.name("incarnation", m.incarnation);
    r.identifier("token", m.token, kMaxNameBytes, false);
    out = std::move(m);
  } else if (type == "welcome") {
    welcome m;
    std::uint64_t version = 0, max_batch = 0, max_frame = 0;
    r.u64("version", version);
    m.version = version > 1000 ? 1000 : static_cast<int>(version);
    r.u64("last_ack", m.last_ack);
    r.u64("max_batch", max_batch, false);
    r.u64("max_frame", max_frame, false);
    if (max_batch) m.max_batch = static_cast<std::size_t>(max_batch);
    if (max_frame) m.max_frame = static_cast<std::size_t>(max_frame);
    out = std::move(m);
  } else if (type == "events") {
    const json* list = r.field("events", true);
    if (list && !list->is_array()) r.fail("events", "must be an array");
    if (r.err()) return r.err();
    if (list->size() > kMaxBatchEvents) {
      return error{std::string(codes::batch_too_large),
                   "a batch holds at most " + std::to_string(kMaxBatchEvents) + " events, got " +
                       std::to_string(list->size())};
    }
    events m;
    m.items.resize(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (auto e = parse_event((*list)[i], i, m.items[i])) return e;
    }
    out = std::move(m);
  } else if (type == "ack") {
    ack m;
    r.u64("seq", m.seq);
    out = m;
  } else if (type == "gap") {
    gap m;
    r.u64("from", m.from);
    r.u64("to", m.to);
    out = m;
  } else if (type == "verdict") {
    verdict m;
    std::string level;
    r.identifier("swarm", m.swarm, kMaxNameBytes);
    r.str("tool", m.tool, kMaxToolBytes);
    r.identifier("kind", m.kind, 16);
    r.fp("fingerprint", m.fingerprint);
    r.str("level", level, 16);
    r.u32("calls", m.calls);
    r.u32("workers", m.workers);
    r.str("message", m.message, kMaxFrameBytes);
    r.num("t", m.t);
    if (!r.err()) {
      const auto s = parse_severity(level);
      if (!s) r.fail("level", "must be warn, critical or terminate");
      if (s) m.level = *s;
    }
    out = std::move(m);
  } else if (type == "swarm_complete") {
    swarm_complete m;
    r.identifier("swarm", m.swarm, kMaxNameBytes, false);
    out = std::move(m);
  } else if (type == "error") {
    error m;
    r.identifier("code", m.code, kMaxNameBytes);
    r.str("message", m.message, kMaxFrameBytes, false);
    out = std::move(m);
  } else {
    return error{std::string(codes::bad_message), "unknown type \"" + type + "\""};
  }
  return r.err();
}

struct to_json_visitor {
  json operator()(const hello& m) const {
    json j{{"type", "hello"},
           {"version", m.version},
           {"swarm", m.swarm},
           {"worker", m.worker},
           {"incarnation", m.incarnation}};
    if (!m.token.empty()) j["token"] = m.token;
    return j;
  }
  json operator()(const welcome& m) const {
    return {{"type", "welcome"},
            {"version", m.version},
            {"last_ack", m.last_ack},
            {"max_batch", m.max_batch},
            {"max_frame", m.max_frame}};
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
      list.push_back(std::move(x));
    }
    return {{"type", "events"}, {"events", std::move(list)}};
  }
  json operator()(const ack& m) const { return {{"type", "ack"}, {"seq", m.seq}}; }
  json operator()(const gap& m) const { return {{"type", "gap"}, {"from", m.from}, {"to", m.to}}; }
  json operator()(const verdict& m) const {
    return {{"type", "verdict"},
            {"swarm", m.swarm},
            {"tool", m.tool},
            {"kind", m.kind},
            {"fingerprint", to_hex(m.fingerprint)},
            {"level", std::string(to_string(m.level))},
            {"calls", m.calls},
            {"workers", m.workers},
            {"message", m.message},
            {"t", m.t}};
  }
  json operator()(const swarm_complete& m) const {
    return {{"type", "swarm_complete"}, {"swarm", m.swarm}};
  }
  json operator()(const error& m) const {
    return {{"type", "error"}, {"code", m.code}, {"message", m.message}};
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

}  // namespace

std::string_view type_name(const message& m) {
  static constexpr std::string_view kNames[] = {"hello", "welcome", "events",         "ack",
                                                "gap",   "verdict", "swarm_complete", "error"};
  return kNames[m.index()];
}

std::optional<error> parse(std::string_view text, message& out) {
  json_input::document doc;
  if (auto e = json_input::parse(text, doc)) {
    return error{std::string(codes::bad_json), "the frame is not valid JSON: " + *e};
  }
  return parse_object(doc.value, out);
}

std::string serialize(const message& m) {
  return json_input::dump(std::visit(to_json_visitor{}, m));
}

std::string encode_binary(const events& batch) {
  std::string out(kBinaryMagic);
  put_u64(out, batch.items.size());
  for (const auto& e : batch.items) {
    put_u64(out, e.seq);
    put_u64(out, e.exact);
    put_u64(out, e.structural);
    put_u64(out, e.result.value_or(0));
    put_u64(out, std::bit_cast<std::uint64_t>(e.t));
    out.push_back(static_cast<char>((e.ok ? 1 : 0) | (e.result ? 2 : 0)));
    put_u16(out, e.tool.size());
    out += e.tool;
    put_u16(out, e.summary.size());
    out += e.summary;
  }
  return out;
}

std::optional<error> decode_binary(std::string_view bytes, events& out) {
  const auto bad = [](const std::string& what) {
    return error{std::string(codes::bad_message), "binary batch: " + what};
  };
  if (bytes.substr(0, kBinaryMagic.size()) != kBinaryMagic) return bad("bad magic");
  byte_reader r(bytes.substr(kBinaryMagic.size()));
  std::uint64_t n = 0;
  if (!r.u64(n)) return bad("truncated header");
  if (n > kMaxBatchEvents) {
    return error{std::string(codes::batch_too_large), "a batch holds at most " +
                                                          std::to_string(kMaxBatchEvents) +
                                                          " events, got " + std::to_string(n)};
  }
  out.items.resize(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < out.items.size(); ++i) {
    event& e = out.items[i];
    std::uint64_t result = 0, t = 0;
    unsigned flags = 0;
    if (!r.u64(e.seq) || !r.u64(e.exact) || !r.u64(e.structural) || !r.u64(result) || !r.u64(t) ||
        !r.u8(flags) || !r.str(e.tool, kMaxToolBytes) || !r.str(e.summary, kMaxSummaryBytes)) {
      return bad("event " + std::to_string(i) + " is truncated or too long");
    }
    e.t = std::bit_cast<double>(t);
    if (!std::isfinite(e.t)) {
      return bad("event " + std::to_string(i) + ": t must be a finite number of seconds");
    }
    // Content is repaired, as in JSON frames; what the repair lengthened past the limit is cut
    // at a code-point boundary.
    if (utf8::repair_in_place(e.tool) > 0) e.tool.resize(utf8::cut_point(e.tool, kMaxToolBytes));
    if (utf8::repair_in_place(e.summary) > 0) {
      e.summary.resize(utf8::cut_point(e.summary, kMaxSummaryBytes));
    }
    e.ok = (flags & 1) != 0;
    e.result = (flags & 2) ? std::optional<std::uint64_t>(result) : std::nullopt;
  }
  if (!r.done()) return bad("trailing bytes");
  return std::nullopt;
}

}  // namespace loopguard::protocol
