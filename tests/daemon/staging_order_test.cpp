// staging_order (docs/storage.md, "Staged in key order"): the parts of a change set merged in the
// key order of the `fingerprints` table, each fingerprint once, the latest part's entry.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "service/staging_order.hpp"

using namespace loopguard::daemon;

namespace {

fingerprint_key exact(std::uint64_t v) {
  return {fingerprint_kind::exact, v};
}
fingerprint_key structural(std::uint64_t v) {
  return {fingerprint_kind::structural, v};
}
fingerprint_row row(std::string swarm, fingerprint_key key, std::uint64_t calls) {
  fingerprint_row r;
  r.swarm = std::move(swarm);
  r.key = key;
  r.stats.calls = calls;
  return r;
}

// What a merge stages, batch by batch: "swarm/kind/value=calls" or "swarm/kind/value erased".
std::vector<std::vector<std::string>> drain(std::vector<state_changes>& parts, std::size_t limit) {
  for (auto& p : parts) sort_part(p);
  staging_order order;
  order.reset(parts);
  std::vector<std::vector<std::string>> out;
  while (!order.done()) {
    const staging_batch b = order.next(limit);
    REQUIRE(b.size() <= limit);
    REQUIRE_FALSE(b.empty());
    auto& names = out.emplace_back();
    const auto name = [](const std::string& s, fingerprint_key k) {
      return s + "/" + std::to_string(static_cast<int>(k.kind)) + "/" +
             std::to_string(static_cast<std::int64_t>(k.value));
    };
    for (const auto* e : b.erased) names.push_back(name(e->swarm, e->key) + " erased");
    for (const auto* r : b.rows) {
      names.push_back(name(r->swarm, r->key) + "=" + std::to_string(r->stats.calls));
    }
    std::sort(names.begin(), names.end());  // within a batch each key is once: order is free
  }
  return out;
}

}  // namespace

TEST_SUITE("staging_order") {
  TEST_CASE("store key order: swarm bytes, then kind, then the value as a signed integer") {
    CHECK(store_key_less("a", exact(9), "b", exact(1)));
    CHECK(store_key_less("a", exact(9), "ab", exact(1)));  // a prefix first
    CHECK(store_key_less("s", exact(9), "s", structural(1)));
    CHECK(store_key_less("s", exact(1), "s", exact(2)));
    // The store binds the value as a signed 64-bit integer: the high bit sorts first.
    CHECK(store_key_less("s", exact(std::uint64_t{1} << 63), "s", exact(0)));
    CHECK_FALSE(store_key_less("s", exact(1), "s", exact(1)));
  }

  TEST_CASE("parts are merged in key order, batch by batch, every fingerprint once") {
    std::vector<state_changes> parts(3);
    parts[0].fingerprints = {row("b", exact(5), 1), row("a", exact(7), 1), row("a", exact(3), 1)};
    parts[1].fingerprints = {row("a", structural(1), 2), row("b", exact(1), 2)};
    parts[1].erased = {{"a", exact(4)}};
    parts[2].fingerprints = {row("c", exact(2), 3)};
    const auto batches = drain(parts, 2);
    REQUIRE(batches.size() == 4);
    CHECK(batches[0] == std::vector<std::string>{"a/0/3=1", "a/0/4 erased"});
    CHECK(batches[1] == std::vector<std::string>{"a/0/7=1", "a/1/1=2"});
    CHECK(batches[2] == std::vector<std::string>{"b/0/1=2", "b/0/5=1"});
    CHECK(batches[3] == std::vector<std::string>{"c/0/2=3"});
  }

  TEST_CASE("a fingerprint in several parts is staged once, as the latest part has it") {
    std::vector<state_changes> parts(4);
    parts[0].fingerprints = {row("s", exact(1), 1), row("s", exact(2), 1)};
    parts[1].erased = {{"s", exact(1)}};              // a row, then erased
    parts[1].fingerprints = {row("s", exact(2), 2)};  // changed again
    parts[2].fingerprints = {row("s", exact(1), 3)};  // erased, then back
    parts[3].erased = {{"s", exact(2)}};              // changed, then erased
    parts[3].fingerprints = {row("s", exact(0), 4)};
    // A batch of one holds one fingerprint: the duplicates of later parts never spill over.
    const auto batches = drain(parts, 1);
    REQUIRE(batches.size() == 3);
    CHECK(batches[0] == std::vector<std::string>{"s/0/0=4"});
    CHECK(batches[1] == std::vector<std::string>{"s/0/1=3"});
    CHECK(batches[2] == std::vector<std::string>{"s/0/2 erased"});
  }

  TEST_CASE("no parts, or only empty ones: nothing to stage") {
    std::vector<state_changes> parts(2);
    staging_order order;
    order.reset(parts);
    CHECK(order.done());
    CHECK(order.next(8).empty());
  }
}
