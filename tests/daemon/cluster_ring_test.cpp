// The cluster ring (daemon/cluster/cluster_ring.hpp): HAProxy's crc32, the bucket of a swarm,
// its owner by weighted rendezvous hashing, the map HAProxy routes by, and the cluster file.
#include <doctest/doctest.h>

#include <map>

#include "cluster/cluster_ring.hpp"

using namespace loopguard;
using namespace loopguard::cluster;

namespace {

ring ring_of(std::vector<std::pair<std::string, std::uint32_t>> servers,
             std::uint32_t buckets = ring::kDefaultBuckets) {
  ring r;
  r.buckets = buckets;
  unsigned port = 7071;
  for (auto& [name, weight] : servers) {
    r.servers.push_back({name, "127.0.0.1:" + std::to_string(port++), weight});
  }
  return r;
}

std::string owner_name(const ring& r, std::string_view swarm) {
  return r.servers[owner_of(r, swarm)].name;
}

// How many of `n` swarm ids ("swarm-0" ...) each server owns.
std::map<std::string, int> spread(const ring& r, int n) {
  std::map<std::string, int> out;
  for (int i = 0; i < n; ++i) ++out[owner_name(r, "swarm-" + std::to_string(i))];
  return out;
}

std::string ring_error(std::string_view json) {
  const auto r = parse_ring(json);
  return r ? "no error" : r.error().message();
}

}  // namespace

TEST_SUITE("cluster ring") {
  TEST_CASE("crc32 is the IEEE CRC-32 HAProxy's crc32 converter computes") {
    CHECK(crc32("") == 0U);
    CHECK(crc32("a") == 0xE8B7BE43U);
    CHECK(crc32("123456789") == 0xCBF43926U);
    CHECK(crc32("The quick brown fox jumps over the lazy dog") == 0x414FA339U);
    CHECK(crc32(std::string_view("\0\xff", 2)) == crc32(std::string("\0\xff", 2)));
    CHECK(bucket_of("123456789", 1024) == 0xCBF43926U % 1024);
    CHECK(bucket_of("123456789", 1) == 0U);
  }

  TEST_CASE("golden owners: the same ring gives the same owners on every run and machine") {
    const ring r = ring_of({{"d1", 1}, {"d2", 1}, {"d3", 1}});
    std::string owners;
    for (std::uint32_t b = 0; b < 24; ++b) owners += r.servers[owner_of_bucket(r, b)].name.back();
    CHECK(owners == "131321313231321333233112");
    std::string swarms;
    for (int i = 0; i < 24; ++i) swarms += owner_name(r, "swarm-" + std::to_string(i)).back();
    CHECK(swarms == "323132331332213233213232");
    CHECK(owner_name(r, "refactor-auth") == "d3");
  }

  TEST_CASE("the order of the server list does not matter") {
    const ring a = ring_of({{"d1", 1}, {"d2", 2}, {"d3", 1}});
    const ring b = ring_of({{"d3", 1}, {"d1", 1}, {"d2", 2}});
    for (std::uint32_t k = 0; k < a.buckets; ++k) {
      REQUIRE(a.servers[owner_of_bucket(a, k)].name == b.servers[owner_of_bucket(b, k)].name);
    }
  }

  TEST_CASE("adding a server moves only the buckets it takes, removing one only its own") {
    const ring two = ring_of({{"d1", 1}, {"d2", 1}});
    const ring three = ring_of({{"d1", 1}, {"d2", 1}, {"d3", 1}});
    int moved = 0;
    for (std::uint32_t b = 0; b < two.buckets; ++b) {
      const std::string before = two.servers[owner_of_bucket(two, b)].name;
      const std::string after = three.servers[owner_of_bucket(three, b)].name;
      if (before != after) {
        ++moved;
        REQUIRE(after == "d3");  // no bucket moves between d1 and d2
      }
    }
    // About a third of the buckets move, all to the new server.
    CHECK(moved > 1024 / 3 - 60);
    CHECK(moved < 1024 / 3 + 60);
  }

  TEST_CASE("weights tune each server's share of the buckets") {
    const ring r = ring_of({{"d1", 3}, {"d2", 1}});
    int d1 = 0;
    for (const std::size_t o : bucket_owners(r)) d1 += o == 0 ? 1 : 0;
    CHECK(d1 > 768 - 50);  // expected 3/4 of 1024
    CHECK(d1 < 768 + 50);
  }

  TEST_CASE("1,000 swarm ids spread within a few percent of even over 2 and 3 servers") {
    const auto two = spread(ring_of({{"d1", 1}, {"d2", 1}}), 1000);
    for (const auto& [name, n] : two) CHECK_MESSAGE(std::abs(n - 500) <= 60, name << ": " << n);
    const auto three = spread(ring_of({{"d1", 1}, {"d2", 1}, {"d3", 1}}), 1000);
    for (const auto& [name, n] : three) CHECK_MESSAGE(std::abs(n - 333) <= 55, name << ": " << n);
  }

  TEST_CASE("the HAProxy map: one line per bucket, BUCKET BACKEND") {
    const ring r = ring_of({{"d1", 1}, {"d2", 1}}, 4);
    const std::string map = haproxy_map(r);
    std::string expected;
    for (std::uint32_t b = 0; b < 4; ++b) {
      expected += std::to_string(b) + " " + r.servers[owner_of_bucket(r, b)].name + "\n";
    }
    CHECK(map == expected);
  }

  TEST_CASE("membership: empty for an owned swarm, else the owner's name and address") {
    const ring r = ring_of({{"d1", 1}, {"d2", 1}});
    const std::size_t owner = owner_of(r, "refactor-auth");
    CHECK(membership{r, owner}.refusal("refactor-auth", true).empty());
    const std::size_t other = 1 - owner;
    CHECK(membership{r, other}.refusal("refactor-auth", true) ==
          "swarm \"refactor-auth\" belongs to " + r.servers[owner].name + " (" +
              r.servers[owner].address + "), not to " + r.servers[other].name +
              ": connect through the cluster's proxy");
    // Where tokens are required the refusal comes before the token's check: no address.
    CHECK(membership{r, other}.refusal("refactor-auth", false) ==
          "swarm \"refactor-auth\" belongs to " + r.servers[owner].name + ", not to " +
              r.servers[other].name + ": connect through the cluster's proxy");
  }

  TEST_CASE("the cluster file: buckets, servers with name, address and weight") {
    const auto r = parse_ring(
        R"({"buckets": 64, "servers": [{"name": "d1", "address": "127.0.0.1:7071"},
            {"name": "d-2.b", "address": "db.example:7072", "weight": 5}]})");
    REQUIRE(r.has_value());
    CHECK(r->buckets == 64);
    REQUIRE(r->servers.size() == 2);
    CHECK(r->servers[0].weight == 1);
    CHECK(r->servers[1].name == "d-2.b");
    CHECK(r->servers[1].address == "db.example:7072");
    CHECK(r->servers[1].weight == 5);
    CHECK(parse_ring(R"({"servers": [{"name": "d1", "address": "[::1]:1"}]})")->buckets == 1024);
    CHECK(*server_index(*r, "d-2.b") == 1);
    CHECK(server_index(*r, "d3").error().message() ==
          "no server is named \"d3\" (the servers: d1, d-2.b)");
  }

  TEST_CASE("a bad cluster file is an error naming the field") {
    CHECK(ring_error(R"({})") == "servers: expected an array, got nothing");
    CHECK(ring_error(R"({"servers": []})") == "servers: expected 1..256 servers, got []");
    CHECK(ring_error(R"({"servers": [{"address": "a:1"}]})") ==
          "servers[0].name: expected a string of at most 1024 bytes, got nothing");
    CHECK(ring_error(R"({"servers": [{"name": "d 1", "address": "a:1"}]})") ==
          "servers[0].name: expected 1..64 of A-Z a-z 0-9 _ . -, got \"d 1\"");
    CHECK(ring_error(R"({"servers": [{"name": "d1", "address": "a"}]})") ==
          "servers[0].address: expected host:port (port 1..65535), got \"a\"");
    CHECK(ring_error(R"({"servers": [{"name": "d1", "address": "a:0"}]})") ==
          "servers[0].address: expected host:port (port 1..65535), got \"a:0\"");
    CHECK(ring_error(R"({"servers": [{"name": "d1", "address": "a:1", "weight": 0}]})") ==
          "servers[0].weight: expected an integer in 1..1000, got 0");
    CHECK(ring_error(R"({"servers": [{"name": "d1", "address": "a:1"},
                                   {"name": "d1", "address": "a:2"}]})") ==
          "servers[1].name: expected a name not given before, got \"d1\"");
    CHECK(ring_error(R"({"buckets": 0, "servers": [{"name": "d1", "address": "a:1"}]})") ==
          "buckets: expected an integer in 1..65536, got 0");
    CHECK(ring_error(R"({"servers": [{"name": "d1", "address": "a:1", "port": 1}]})") ==
          "servers[0].port: unknown key, expected one of address, name, weight");
  }
}
