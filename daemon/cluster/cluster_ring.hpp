// Which daemon of a cluster owns a swarm (docs/scaling.md, "Ownership"): one pure function that
// both HAProxy (through the map it produced) and every daemon use, so a swarm has one owner.
//
//   bucket = crc32(swarm id bytes) mod buckets   (HAProxy: url_param(swarm),url_dec,crc32,mod(B))
//   owner  = the server with the highest weighted rendezvous score for that bucket
//
// Rendezvous (highest random weight) hashing: each (server, bucket) pair gets a pseudo-random
// u in (0, 1) from the server's name and the bucket number; the score is weight / -ln(u), and
// the highest wins. Adding a server moves only the buckets it now wins (about weight/total of
// them), removing one moves only its own, and a server's expected share is its weight over the
// sum of the weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/status.hpp"

namespace loopguard::cluster {

// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, as gzip, PNG and HAProxy's `crc32`
// converter without avalanche compute it): "123456789" gives 0xCBF43926.
std::uint32_t crc32(std::string_view bytes);

struct server {
  std::string name;     // the HAProxy backend's name and --cluster-self
  std::string address;  // host:port HAProxy forwards to
  std::uint32_t weight = 1;
};

struct ring {
  static constexpr std::uint32_t kDefaultBuckets = 1024;
  static constexpr std::uint32_t kMaxBuckets = 65536;
  static constexpr std::uint32_t kMaxWeight = 1000;
  std::uint32_t buckets = kDefaultBuckets;
  std::vector<server> servers;  // at least one, names unique
};

// The bucket of a swarm id: crc32 of its bytes mod `buckets`.
std::uint32_t bucket_of(std::string_view swarm, std::uint32_t buckets);
// The index in r.servers of the bucket's owner (r has at least one server).
std::size_t owner_of_bucket(const ring& r, std::uint32_t bucket);
// The index in r.servers of the swarm's owner.
std::size_t owner_of(const ring& r, std::string_view swarm);
// Every bucket's owner, bucket by bucket.
std::vector<std::size_t> bucket_owners(const ring& r);
// HAProxy's map file for map_int: one line per bucket, `BUCKET BACKEND`, the backend named
// after its server.
std::string haproxy_map(const ring& r);

// The ring a cluster file holds (JSON, docs/scaling.md):
//   {"buckets": 1024, "servers": [{"name": "d1", "address": "127.0.0.1:7071", "weight": 1}]}
// Names are 1..64 of [A-Za-z0-9_.-] (HAProxy backend names), unique; addresses host:port;
// weights 1..1000 (default 1). Errors name the field (`servers[1].name: ...`).
result<ring> parse_ring(std::string_view json_text);
// The file at `path`; errors start with `PATH: `.
result<ring> load_ring(const std::string& path);
// The index of the server named `self`, or an error naming the servers there are.
result<std::size_t> server_index(const ring& r, std::string_view self);

// One daemon's view of its cluster: the ring and which server it is.
struct membership {
  ring layout;
  std::size_t self = 0;
  // Empty when this daemon owns `swarm`, else why not, naming the owner
  // (`swarm "s" belongs to d2 (127.0.0.1:7072), not to d1: connect through the proxy`).
  // `with_address`: also the owner's address (only where every client may know it: the refusal
  // comes before any token is checked).
  std::string refusal(std::string_view swarm, bool with_address) const;
};

}  // namespace loopguard::cluster
