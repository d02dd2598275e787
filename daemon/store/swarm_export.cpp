#include "store/swarm_export.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "loopguard/hex.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"
#include "state/shared_economics_state.hpp"
#include "store/byte_codec.hpp"
#include "store/fingerprint_codec.hpp"

namespace loopguard::daemon {
namespace {

constexpr std::string_view kChecksumTag = "xxh3 ";
constexpr std::size_t kChecksumLine = 5 + 16 + 1;                // "xxh3 " + 16 hex digits + "\n"
constexpr std::size_t kMaxHeaderBytes = 64 * 1024;               // the JSON header line
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{4} << 30;  // refused above (4 GiB)

bool get_blob(byte_reader& r, std::string_view& out) {
  std::uint32_t n = 0;
  return r.get(n) && r.take(n, 1, out);
}

std::uint64_t checksum(std::string_view bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

bool finite(double v) {
  return std::isfinite(v);
}
bool finite(const protocol::cost& c) {
  return std::isfinite(c.amount);
}

std::string shown(std::string_view s) {
  return "\"" + utf8::repair(s.substr(0, 80)) + (s.size() > 80 ? "...\"" : "\"");
}

// A name the daemon would have accepted at its boundary.
bool is_name(std::string_view s) {
  return !s.empty() && s.size() <= protocol::kMaxNameBytes && utf8::is_identifier(s);
}

struct payload_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads the payload; throws payload_error saying what is malformed.
swarm_export decode_payload(std::string_view payload) {
  swarm_export e;
  byte_reader r(payload);
  const auto need = [](bool ok, const char* what) {
    if (!ok) throw payload_error(std::string("malformed payload: ") + what);
  };
  std::string_view name, blob;
  need(r.str(name), "the swarm's name is cut short");
  e.swarm.swarm = name;
  need(r.get(e.swarm.latest_t) && r.get(e.swarm.spent.tokens) && r.get(e.swarm.spent.amount) &&
           r.get(e.swarm.wasted.tokens) && r.get(e.swarm.wasted.amount) && r.get(e.swarm.expired) &&
           r.get(e.seen) && get_blob(r, blob),
       "the swarm row is cut short");
  need(decode_handoffs(blob, e.swarm.handoffs), "the swarm's hand-offs are malformed");
  std::uint32_t n = 0;
  need(r.get(n), "the worker count is missing");
  for (std::uint32_t i = 0; i < n; ++i) {
    worker_row w{e.swarm.swarm, 0, {}};
    need(r.get(w.id) && r.str(name), "a worker row is cut short");
    w.name = name;
    e.workers.push_back(std::move(w));
  }
  need(r.get(n), "the fingerprint count is missing");
  for (std::uint32_t i = 0; i < n; ++i) {
    fingerprint_row f;
    f.swarm = e.swarm.swarm;
    std::uint8_t kind = 0;
    need(r.get(kind) && r.get(f.key.value) && get_blob(r, blob), "a fingerprint row is cut short");
    need(kind <= 1, "a fingerprint's kind is neither 0 (exact) nor 1 (structural)");
    f.key.kind = static_cast<fingerprint_kind>(kind);
    need(decode_fingerprint(blob, f.stats), "a fingerprint's data is malformed");
    e.fingerprints.push_back(std::move(f));
  }
  need(r.get(n), "the sequence count is missing");
  for (std::uint32_t i = 0; i < n; ++i) {
    sequence_row s;
    std::string_view worker, incarnation;
    need(r.str(worker) && r.str(incarnation) && r.get(s.seq) && r.get(s.seen),
         "a sequence row is cut short");
    s.id = {e.swarm.swarm, std::string(worker), std::string(incarnation)};
    e.sequences.push_back(std::move(s));
  }
  need(r.get(n), "the expired-incarnation count is missing");
  for (std::uint32_t i = 0; i < n; ++i) {
    expired_row x;
    std::string_view worker, incarnation;
    need(r.str(worker) && r.str(incarnation) && r.get(x.expired),
         "an expired-incarnation row is cut short");
    x.id = {e.swarm.swarm, std::string(worker), std::string(incarnation)};
    e.expired.push_back(std::move(x));
  }
  need(r.at_end(), "bytes after the last row");
  return e;
}

// One fingerprint row (the i-th, after `prev`): empty when a daemon could have written it.
std::string check_fingerprint(const fingerprint_row& f, const fingerprint_row* prev, std::size_t i,
                              std::uint32_t n_workers) {
  const auto& st = f.stats;
  const std::string which = "fingerprint " + std::to_string(i) + ": ";
  if (prev && !(prev->key < f.key)) return which + "not in key order";
  if (!std::is_sorted(st.workers.begin(), st.workers.end()) ||
      std::adjacent_find(st.workers.begin(), st.workers.end()) != st.workers.end()) {
    return which + "its worker ids are not sorted and distinct";
  }
  if (!st.workers.empty() && st.workers.back() >= n_workers) {
    return which + "worker id " + std::to_string(st.workers.back()) + " out of range (" +
           std::to_string(n_workers) + " workers)";
  }
  if (st.window.size() > swarm_rules::kMaxWindowCallsLimit) {
    return which + "its window holds more than " +
           std::to_string(swarm_rules::kMaxWindowCallsLimit) + " calls";
  }
  for (std::size_t c = 0; c < st.window.size(); ++c) {
    if (st.window[c].worker >= n_workers) {
      return which + "a windowed call's worker id " + std::to_string(st.window[c].worker) +
             " is out of range (" + std::to_string(n_workers) + " workers)";
    }
    if (!finite(st.window[c].t)) return which + "a windowed call's time is not finite";
  }
  if (st.results.size() > shared_economics_state::kMaxResultsPerFingerprint) {
    return which + "more than " +
           std::to_string(shared_economics_state::kMaxResultsPerFingerprint) + " results";
  }
  if (!utf8::is_valid(st.tool) || !utf8::is_valid(st.summary)) {
    return which + "its tool or summary is not valid UTF-8";
  }
  if (!finite(st.first_seen) || !finite(st.last_seen) || !finite(st.level_t) ||
      !finite(st.wasted) || !finite(st.booked)) {
    return which + "a number that is not finite";
  }
  return {};
}

// Sequence or expired-incarnation rows (`what`): names, order, and the time `when` of each.
template <class Row, class When>
std::string check_incarnations(const std::vector<Row>& rows, const char* what, When when) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string which = std::string(what) + " " + std::to_string(i) + ": ";
    const auto& id = rows[i].id;
    if (!is_name(id.worker) || !is_name(id.incarnation)) {
      return which + "its worker or incarnation is not valid";
    }
    if (i > 0 && !(rows[i - 1].id < id)) return which + "not in order, or repeated";
    if (!finite(when(rows[i]))) return which + "its time is not finite";
  }
  return {};
}

// The rows must be what a daemon could have written: restoring them must not index past the
// workers, and every name must be one the daemon accepts. Empty when they are; else what is not.
std::string check_rows(const swarm_export& e) {
  if (!is_name(e.swarm.swarm)) return "the swarm name " + shown(e.swarm.swarm) + " is not valid";
  if (!finite(e.swarm.latest_t) || !finite(e.swarm.spent) || !finite(e.swarm.wasted) ||
      !finite(e.swarm.expired) || !finite(e.seen)) {
    return "the swarm row holds a number that is not finite";
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < e.workers.size(); ++i) {
    const auto& w = e.workers[i];
    if (w.id != i) {
      return "worker ids are not 0.." + std::to_string(e.workers.size() - 1) + " in order (row " +
             std::to_string(i) + " has id " + std::to_string(w.id) + ")";
    }
    if (!is_name(w.name)) return "worker " + std::to_string(i) + "'s name is not valid";
    if (!names.insert(w.name).second) return "the worker name " + shown(w.name) + " repeats";
  }
  const auto n_workers = static_cast<std::uint32_t>(e.workers.size());
  for (std::size_t i = 0; i < e.fingerprints.size(); ++i) {
    auto why = check_fingerprint(e.fingerprints[i], i > 0 ? &e.fingerprints[i - 1] : nullptr, i,
                                 n_workers);
    if (!why.empty()) return why;
  }
  auto why =
      check_incarnations(e.sequences, "sequence row", [](const sequence_row& r) { return r.seen; });
  if (!why.empty()) return why;
  return check_incarnations(e.expired, "expired incarnation",
                            [](const expired_row& r) { return r.expired; });
}

std::uint64_t digest_of_rows(const swarm_export& e) {
  shared_economics_state s;
  state_snapshot snap;
  snap.swarms.push_back(e.swarm);
  snap.workers = e.workers;
  snap.fingerprints = e.fingerprints;
  s.restore(std::move(snap));
  return s.digest(e.swarm.swarm);
}

// The header's field `key` as the type asked for, or why not.
template <class T>
std::string field(const nlohmann::json& h, const char* key, T& out) {
  const auto it = h.find(key);
  if (it == h.end()) return std::string("the header has no \"") + key + "\"";
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return std::string("the header's \"") + key + "\" is not a string";
  } else {
    if (!it->is_number_unsigned()) {
      return std::string("the header's \"") + key + "\" is not a non-negative integer";
    }
  }
  out = it->get<T>();
  return {};
}

}  // namespace

std::string encode_swarm_payload(const swarm_export& e) {
  std::string out;
  byte_writer w(out);
  std::string blob;
  w.str(e.swarm.swarm);
  w.put(e.swarm.latest_t);
  w.put(e.swarm.spent.tokens);
  w.put(e.swarm.spent.amount);
  w.put(e.swarm.wasted.tokens);
  w.put(e.swarm.wasted.amount);
  w.put(e.swarm.expired);
  w.put(e.seen);
  encode_handoffs(e.swarm.handoffs, blob);
  w.put(static_cast<std::uint32_t>(blob.size()));
  out += blob;
  w.put(static_cast<std::uint32_t>(e.workers.size()));
  for (const auto& r : e.workers) {
    w.put(r.id);
    w.str(r.name);
  }
  w.put(static_cast<std::uint32_t>(e.fingerprints.size()));
  for (const auto& f : e.fingerprints) {
    w.put(static_cast<std::uint8_t>(f.key.kind));
    w.put(f.key.value);
    encode_fingerprint(f.stats, blob);
    w.put(static_cast<std::uint32_t>(blob.size()));
    out += blob;
  }
  w.put(static_cast<std::uint32_t>(e.sequences.size()));
  for (const auto& s : e.sequences) {
    w.str(s.id.worker);
    w.str(s.id.incarnation);
    w.put(s.seq);
    w.put(s.seen);
  }
  w.put(static_cast<std::uint32_t>(e.expired.size()));
  for (const auto& x : e.expired) {
    w.str(x.id.worker);
    w.str(x.id.incarnation);
    w.put(x.expired);
  }
  return out;
}

void normalize(swarm_export& e) {
  std::sort(e.workers.begin(), e.workers.end(),
            [](const worker_row& a, const worker_row& b) { return a.id < b.id; });
  std::sort(e.fingerprints.begin(), e.fingerprints.end(),
            [](const fingerprint_row& a, const fingerprint_row& b) { return a.key < b.key; });
  std::sort(e.sequences.begin(), e.sequences.end(),
            [](const sequence_row& a, const sequence_row& b) { return a.id < b.id; });
  std::sort(e.expired.begin(), e.expired.end(),
            [](const expired_row& a, const expired_row& b) { return a.id < b.id; });
  e.digest = digest_of_rows(e);
}

std::string encode_swarm_export(const swarm_export& e, const export_origin& origin) {
  const std::string payload = encode_swarm_payload(e);
  const nlohmann::json header = {
      {"swarm", e.swarm.swarm},
      {"digest", to_hex(e.digest)},
      {"tombstone", e.swarm.expired != 0},
      {"workers", e.workers.size()},
      {"fingerprints", e.fingerprints.size()},
      {"sequences", e.sequences.size()},
      {"expired_incarnations", e.expired.size()},
      {"bytes", payload.size()},
      {"exported_from", origin.db},
      {"exported_at", origin.exported_at},
  };
  std::string out = std::string(kSwarmExportMagic) + " " + std::to_string(kSwarmExportVersion) +
                    "\n" + header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                    "\n" + payload;
  out += std::string(kChecksumTag) + to_hex(checksum(out)) + "\n";
  return out;
}

namespace {

// What the envelope holds once its checks passed: the header and the payload it covers.
struct envelope {
  nlohmann::json header;
  std::string_view payload;
};

// The magic and version line, the header line, the payload's size and the checksum line.
result<envelope> open_envelope(std::string_view file) {
  const auto fail = [](const std::string& why) { return status::error(why); };
  const std::string magic = std::string(kSwarmExportMagic) + " ";
  if (!file.starts_with(magic)) {
    return fail("not a loopguard swarm export (it does not start with \"" + magic + "\")");
  }
  const auto line_end = file.find('\n');
  if (line_end == std::string_view::npos || line_end > magic.size() + 10) {
    return fail("truncated or malformed first line (expected \"" + magic +
                std::to_string(kSwarmExportVersion) + "\")");
  }
  const std::string_view version = file.substr(magic.size(), line_end - magic.size());
  bool known = false;
  for (int v = kSwarmExportOldestVersion; v <= kSwarmExportVersion; ++v) {
    known |= version == std::to_string(v);
  }
  if (!known) {
    return fail("format version " + shown(version) + ", which this build does not read (it reads " +
                std::to_string(kSwarmExportOldestVersion) + " to " +
                std::to_string(kSwarmExportVersion) + ")");
  }
  const auto header_end = file.find('\n', line_end + 1);
  if (header_end == std::string_view::npos || header_end - line_end > kMaxHeaderBytes) {
    return fail("truncated: the header line does not end (or is longer than " +
                std::to_string(kMaxHeaderBytes) + " bytes)");
  }
  envelope out;
  out.header =
      nlohmann::json::parse(file.substr(line_end + 1, header_end - line_end - 1), nullptr, false);
  if (!out.header.is_object()) return fail("the header line is not a JSON object");
  std::uint64_t bytes = 0;
  if (auto why = field(out.header, "bytes", bytes); !why.empty()) return fail(why);
  const std::size_t payload_at = header_end + 1;
  const std::size_t have = file.size() - payload_at;
  if (bytes > have || have - bytes < kChecksumLine) {
    return fail("truncated: the header announces " + std::to_string(bytes) +
                " bytes of payload and a checksum line, but only " + std::to_string(have) +
                " bytes follow it");
  }
  if (have - bytes > kChecksumLine) {
    return fail(std::to_string(have - bytes - kChecksumLine) +
                " bytes after the checksum line (or a wrong payload size in the header)");
  }
  const std::string_view trailer = file.substr(payload_at + bytes);
  if (!trailer.starts_with(kChecksumTag) || !trailer.ends_with("\n")) {
    return fail("the last line is not \"xxh3 <16 hex digits>\" (truncated or corrupted)");
  }
  const auto stored = from_hex(trailer.substr(kChecksumTag.size(), 16));
  if (!stored) return fail("the checksum line does not hold 16 hex digits");
  if (const std::uint64_t computed = checksum(file.substr(0, payload_at + bytes));
      computed != *stored) {
    return fail("checksum mismatch: the file says " + to_hex(*stored) + ", its bytes hash to " +
                to_hex(computed) + " (the file is corrupted)");
  }
  out.payload = file.substr(payload_at, bytes);
  return out;
}

}  // namespace

result<swarm_export> decode_swarm_export(std::string_view file) {
  const auto fail = [](const std::string& why) { return status::error(why); };
  auto env = open_envelope(file);
  if (!env) return env.error();
  const auto& header = env->header;
  std::string swarm, digest_hex;
  for (const auto& why : {field(header, "swarm", swarm), field(header, "digest", digest_hex)}) {
    if (!why.empty()) return fail(why);
  }
  const auto digest = from_hex(digest_hex);
  if (!digest) return fail("the header's \"digest\" is not 16 hex digits");
  swarm_export e;
  try {
    e = decode_payload(env->payload);
  } catch (const payload_error& x) {
    return fail(x.what());
  }
  if (e.swarm.swarm != swarm) {
    return fail("the header names swarm " + shown(swarm) + " but the rows are of " +
                shown(e.swarm.swarm));
  }
  const std::pair<const char*, std::size_t> counts[] = {{"workers", e.workers.size()},
                                                        {"fingerprints", e.fingerprints.size()},
                                                        {"sequences", e.sequences.size()},
                                                        {"expired_incarnations", e.expired.size()}};
  for (const auto& [key, n] : counts) {
    std::uint64_t said = 0;
    if (auto why = field(header, key, said); !why.empty()) return fail(why);
    if (said != n) {
      return fail(std::string("the header says ") + std::to_string(said) + " " + key +
                  ", the payload holds " + std::to_string(n));
    }
  }
  if (auto why = check_rows(e); !why.empty()) return fail(why);
  e.digest = *digest;
  if (const std::uint64_t rows = digest_of_rows(e); rows != e.digest) {
    return fail("the rows' digest is " + to_hex(rows) + ", the header says " + to_hex(e.digest));
  }
  return e;
}

result<swarm_export> read_swarm_export(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return status::error(path + ": cannot read it (" + ec.message() + ")");
  if (size > kMaxFileBytes) {
    return status::error(path + ": " + std::to_string(size) + " bytes, more than a swarm export " +
                         "may hold (" + std::to_string(kMaxFileBytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return status::error(path + ": cannot read it (" + std::strerror(errno) + ")");
  }
  auto e = decode_swarm_export(bytes);
  if (!e) return e.error().with_context(path + ": ");
  return e;
}

status write_swarm_export(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    return status::error(path + ": already exists (a swarm export is never overwritten)");
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return status::error(path + ": cannot write it (" + std::strerror(errno) + ")");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return status::error(path + ": cannot write it (" + ec.message() + ")");
  return {};
}

}  // namespace loopguard::daemon
