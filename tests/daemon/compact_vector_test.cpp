#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "state/call_window.hpp"
#include "state/compact_vector.hpp"

using namespace loopguard::daemon;

namespace {

struct triple {
  std::uint32_t a = 0, b = 0, c = 0;
  friend bool operator==(const triple&, const triple&) = default;
};

template <class V, class T>
bool same_items(const V& v, const std::vector<T>& model) {
  return v.size() == model.size() && std::equal(v.begin(), v.end(), model.begin(), model.end()) &&
         std::equal(v.rbegin(), v.rend(), model.rbegin(), model.rend());
}

}  // namespace

TEST_SUITE("compact vector") {
  TEST_CASE("the header is the inline elements or the block address, and two 32-bit counts") {
    CHECK(sizeof(compact_vector<std::uint32_t, 2>) == 16);
    CHECK(sizeof(compact_vector<std::uint64_t, 1>) == 16);
    CHECK(sizeof(compact_vector<window_call, 1>) == 24);
    CHECK(sizeof(compact_vector<triple, 1>) == 24);
  }

  TEST_CASE("it behaves as std::vector under any mix of pushes, inserts, erases and resizes") {
    std::mt19937 rng(11);
    compact_vector<std::uint32_t, 2> v;
    std::vector<std::uint32_t> model;
    for (int step = 0; step < 30000; ++step) {
      const auto x = static_cast<std::uint32_t>(rng());
      switch (rng() % 8) {
        case 0:
        case 1:
          v.push_back(x);
          model.push_back(x);
          break;
        case 2: {
          const std::size_t at = model.empty() ? 0 : rng() % (model.size() + 1);
          CHECK(*v.insert(v.begin() + at, x) == x);
          model.insert(model.begin() + static_cast<std::ptrdiff_t>(at), x);
          break;
        }
        case 3:
          if (!model.empty()) {
            const std::size_t at = rng() % model.size();
            v.erase(v.begin() + at);
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        case 4:
          if (!model.empty()) {
            const std::size_t from = rng() % model.size();
            const std::size_t n = rng() % (model.size() - from + 1);
            v.erase(v.begin() + from, v.begin() + from + n);
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(from),
                        model.begin() + static_cast<std::ptrdiff_t>(from + n));
          }
          break;
        case 5:
          if (rng() % 20 == 0) {
            const std::size_t n = rng() % 40;
            v.resize(n);
            model.resize(n);
          }
          break;
        case 6:
          if (!model.empty()) {
            v.pop_back();
            model.pop_back();
          }
          break;
        default:
          if (rng() % 50 == 0) {
            v.clear();
            model.clear();
          }
      }
      REQUIRE(v.size() == model.size());
      REQUIRE(v.capacity() >= v.size());
      if (step % 101 == 0) REQUIRE(same_items(v, model));
    }
    CHECK(same_items(v, model));
  }

  TEST_CASE("growing one at a time doubles the capacity, resize and reserve allocate exactly") {
    compact_vector<std::uint64_t, 1> v;
    std::vector<std::size_t> capacities{v.capacity()};
    for (std::uint64_t i = 0; i < 9; ++i) {
      v.push_back(i);
      if (v.capacity() != capacities.back()) capacities.push_back(v.capacity());
    }
    CHECK(capacities == std::vector<std::size_t>{1, 2, 4, 8, 16});
    compact_vector<std::uint64_t, 1> r;
    r.resize(7);
    CHECK(r.capacity() == 7);
    CHECK(same_items(r, std::vector<std::uint64_t>(7, 0)));  // value-initialised
    r.reserve(3);
    CHECK(r.capacity() == 7);
    r.reserve(12);
    CHECK(r.capacity() == 12);
    r.erase(r.begin(), r.end());
    CHECK(r.capacity() == 12);  // erasing keeps the block
  }

  TEST_CASE("an element of the vector itself can be pushed or inserted as it reallocates") {
    compact_vector<std::uint32_t, 2> v{5, 6};
    v.push_back(v[0]);  // full inline: the push moves the elements to the heap first
    CHECK(same_items(v, std::vector<std::uint32_t>{5, 6, 5}));
    v.push_back(7);  // capacity 4, full
    v.insert(v.begin(), v.back());
    CHECK(same_items(v, std::vector<std::uint32_t>{7, 5, 6, 5, 7}));
    compact_vector<triple, 1> ts;
    CHECK(ts.emplace_back(triple{1, 2, 3}) == triple{1, 2, 3});
    CHECK(ts.emplace_back(triple{4, 5, 6}).a == 4);
    CHECK(ts.front() == triple{1, 2, 3});
  }

  TEST_CASE("copies are deep, moves take the elements and leave the source empty") {
    for (std::size_t n : {0u, 1u, 2u, 3u, 50u}) {
      CAPTURE(n);
      compact_vector<std::uint32_t, 2> a;
      for (std::uint32_t i = 0; i < n; ++i) a.push_back(i * 3);
      const std::vector<std::uint32_t> model(a.begin(), a.end());

      compact_vector<std::uint32_t, 2> copy(a);
      CHECK(copy == a);
      if (n) copy[0] = 99;
      CHECK(same_items(a, model));

      compact_vector<std::uint32_t, 2> moved(std::move(a));
      CHECK(same_items(moved, model));
      CHECK(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from vector is empty
      CHECK(a.capacity() == 2);
      a.push_back(1);  // and usable
      CHECK(same_items(a, std::vector<std::uint32_t>{1}));

      compact_vector<std::uint32_t, 2> assigned{8, 9, 10};
      assigned = moved;
      CHECK(assigned == moved);
      assigned = std::move(moved);
      CHECK(same_items(assigned, model));
      const auto& self = assigned;
      assigned = self;  // self-assignment keeps the elements
      CHECK(same_items(assigned, model));
      assigned = {4};
      CHECK(same_items(assigned, std::vector<std::uint32_t>{4}));
    }
  }
}
