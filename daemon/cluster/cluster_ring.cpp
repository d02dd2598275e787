#include "cluster/cluster_ring.hpp"

#include <array>
#include <cmath>
#include <set>

#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"

namespace loopguard::cluster {
namespace {

constexpr std::size_t kMaxServers = 256;
constexpr std::size_t kMaxNameBytes = 64;

constexpr std::array<std::uint32_t, 256> crc_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = crc_table();

// splitmix64's finaliser: every input bit moves every output bit.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ULL;
  }
  return h;
}

// The server's score for the bucket: weight / -ln(u), u in (0, 1) from (name, bucket).
double score(const server& s, std::uint64_t name_hash, std::uint32_t bucket) {
  const std::uint64_t h = mix(name_hash ^ mix(bucket));
  const double u = (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
  return static_cast<double>(s.weight) / -std::log(u);
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (const char c : name) {
    if (!name_char(c)) return false;
  }
  return true;
}

// host:port with a port in 1..65535 and no whitespace in the host.
bool valid_address(std::string_view a) {
  const auto colon = a.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  for (const char c : a.substr(0, colon)) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return false;
  }
  const std::string_view port = a.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  unsigned value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value >= 1 && value <= 65535;
}

void read_server(json_fields::object x, server& s) {
  if (x.string(json_fields::required("name"), s.name, 1024) && !valid_name(s.name)) {
    x.fail("name", "1..64 of A-Z a-z 0-9 _ . -", nlohmann::json(s.name));
  }
  if (x.string(json_fields::required("address"), s.address, 256) && !valid_address(s.address)) {
    x.fail("address", "host:port (port 1..65535)", nlohmann::json(s.address));
  }
  x.integer("weight", s.weight, 1, ring::kMaxWeight);
}

}  // namespace

std::uint32_t crc32(std::string_view bytes) {
  std::uint32_t c = 0xFFFFFFFFU;
  for (const char ch : bytes)
    c = kCrcTable[(c ^ static_cast<unsigned char>(ch)) & 0xFFU] ^ (c >> 8);
  return ~c;
}

std::uint32_t bucket_of(std::string_view swarm, std::uint32_t buckets) {
  return crc32(swarm) % buckets;
}

std::size_t owner_of_bucket(const ring& r, std::uint32_t bucket) {
  std::size_t best = 0;
  double best_score = -1;
  for (std::size_t i = 0; i < r.servers.size(); ++i) {
    const double s = score(r.servers[i], fnv1a(r.servers[i].name), bucket);
    // Ties (never seen in practice) go to the smaller name, so the order of the list never
    // matters.
    if (s > best_score || (s == best_score && r.servers[i].name < r.servers[best].name)) {
      best = i;
      best_score = s;
    }
  }
  return best;
}

std::size_t owner_of(const ring& r, std::string_view swarm) {
  return owner_of_bucket(r, bucket_of(swarm, r.buckets));
}

std::vector<std::size_t> bucket_owners(const ring& r) {
  std::vector<std::size_t> out(r.buckets);
  for (std::uint32_t b = 0; b < r.buckets; ++b) out[b] = owner_of_bucket(r, b);
  return out;
}

std::string haproxy_map(const ring& r) {
  std::string out;
  const auto owners = bucket_owners(r);
  for (std::size_t b = 0; b < owners.size(); ++b) {
    out += std::to_string(b) + " " + r.servers[owners[b]].name + "\n";
  }
  return out;
}

namespace {

// The ring of a parsed cluster file (parse_ring's rules).
result<ring> read_ring(const nlohmann::json& doc) {
  ring r;
  json_fields::reader x(doc, {.name = "cluster file"});
  x.integer("buckets", r.buckets, 1, ring::kMaxBuckets);
  const nlohmann::json* list = x.array(json_fields::required("servers"));
  if (list != nullptr) {
    if (list->empty() || list->size() > kMaxServers) {
      x.fail("servers", "1.." + std::to_string(kMaxServers) + " servers", *list);
    }
    std::set<std::string, std::less<>> names;
    for (std::size_t i = 0; i < list->size() && x.ok(); ++i) {
      server s;
      read_server(x.item(list, "servers", i), s);
      if (x.ok() && !names.insert(s.name).second) {
        x.fail("servers[" + std::to_string(i) + "].name", "a name not given before",
               nlohmann::json(s.name));
      }
      r.servers.push_back(std::move(s));
    }
  }
  if (status s = x.finish(); !s.ok()) return s;
  return r;
}

}  // namespace

result<ring> parse_ring(std::string_view json_text) {
  const auto doc = json_input::parse(json_text);
  if (!doc) return doc.error();
  return read_ring(doc->value);
}

result<ring> load_ring(const std::string& path) {
  const auto doc = json_input::parse_file(path);
  if (!doc) return doc.error();
  auto r = read_ring(doc->value);
  if (!r) return r.error().with_context(path + ": ");
  return r;
}

result<std::size_t> server_index(const ring& r, std::string_view self) {
  std::string known;
  for (std::size_t i = 0; i < r.servers.size(); ++i) {
    if (r.servers[i].name == self) return i;
    known += (known.empty() ? "" : ", ") + r.servers[i].name;
  }
  return status::error("no server is named \"" + std::string(self) + "\" (the servers: " + known +
                       ")");
}

std::string membership::refusal(std::string_view swarm, bool with_address) const {
  const std::size_t owner = owner_of(layout, swarm);
  if (owner == self) return {};
  const server& o = layout.servers[owner];
  return "swarm \"" + std::string(swarm) + "\" belongs to " + o.name +
         (with_address ? " (" + o.address + ")" : std::string()) + ", not to " +
         layout.servers[self].name + ": connect through the cluster's proxy";
}

}  // namespace loopguard::cluster
