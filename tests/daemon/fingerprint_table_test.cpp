#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

#include "state/fingerprint_table.hpp"

using namespace loopguard::daemon;

namespace {
using table = fingerprint_table<std::uint64_t, std::string>;
}  // namespace

TEST_SUITE("fingerprint table") {
  TEST_CASE("the table agrees with std::map under random inserts, finds and erases") {
    std::mt19937_64 rng(11);
    table t;
    std::map<std::uint64_t, std::string> model;
    for (int step = 0; step < 60000; ++step) {
      const std::uint64_t k = rng() % 3000;
      switch (rng() % 4) {
        case 0:
        case 1: {
          auto [it, inserted] = t.try_emplace(k);
          const auto [m, m_inserted] = model.try_emplace(k);
          REQUIRE(inserted == m_inserted);
          if (inserted) CHECK(it->second.empty());  // value-initialized, also in a reused slot
          it->second = std::to_string(step);
          m->second = it->second;
          break;
        }
        case 2: {
          const auto it = t.find(k);
          REQUIRE((it == t.end()) == !model.contains(k));
          if (it != t.end()) CHECK(it->second == model.at(k));
          break;
        }
        default: {
          const auto it = t.find(k);
          if (it != t.end()) t.erase(it);
          model.erase(k);
        }
      }
      REQUIRE(t.size() == model.size());
    }
    std::map<std::uint64_t, std::string> seen;
    for (const auto& [k, v] : t) seen.emplace(k, v);
    CHECK(seen == model);
  }

  TEST_CASE("an entry stays where it is while others are inserted and erased") {
    table t;
    std::string& first = t[1];
    first = "one";
    const std::string* where = &first;
    for (std::uint64_t k = 2; k < 20000; ++k) t[k] = "x";  // many index rehashes, new chunks
    for (std::uint64_t k = 2; k < 20000; k += 2) t.erase(t.find(k));
    for (std::uint64_t k = 30000; k < 35000; ++k) t[k] = "y";  // reuses the freed slots
    CHECK(&t.at(1) == where);
    CHECK(*where == "one");
    CHECK(t.size() == 1 + 9999 + 5000);
  }

  TEST_CASE("at refuses a missing key and a moved table keeps its entries") {
    table t;
    t[5] = "five";
    CHECK_THROWS_AS(t.at(6), std::out_of_range);
    table u(std::move(t));
    CHECK(u.at(5) == "five");
    t = std::move(u);
    CHECK(t.at(5) == "five");
    t.clear();
    CHECK(t.empty());
    CHECK(t.find(5) == t.end());
    t[5] = "again";
    CHECK(t.at(5) == "again");
  }
}
