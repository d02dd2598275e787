#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "state/fingerprint_table.hpp"
#include "state/state_rows.hpp"

using namespace loopguard::daemon;

namespace {
using table = fingerprint_table<std::uint64_t, std::string>;

// With these seeds a key's home bucket is its word xor kFold, masked (fingerprint_table::home()):
// key_at(h) lands in bucket h of any table of more than h buckets, key_at(h + n * buckets) too.
constexpr hash_seed kKnown{0, 1};
constexpr std::uint64_t kFold = 0x9E3779B97F4A7C15ull;  // the tag's multiplier (tag 1)
std::uint64_t key_at(std::uint64_t bucket) {
  return bucket ^ kFold;
}

std::vector<std::uint64_t> keys_in_order(const table& t) {
  std::vector<std::uint64_t> out;
  for (const auto& kv : t) out.push_back(kv.first);
  return out;
}

// Random inserts, finds and erases of `keys`, checked against std::map after every step.
void agree_with_map(table& t, const std::vector<std::uint64_t>& keys, std::uint64_t seed,
                    int steps) {
  std::mt19937_64 rng(seed);
  std::map<std::uint64_t, std::string> model;
  for (const auto& [k, v] : t) model.emplace(k, v);
  for (int step = 0; step < steps; ++step) {
    const std::uint64_t k = keys[rng() % keys.size()];
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
  for (const auto& [k, v] : t) CHECK(seen.emplace(k, v).second);  // each entry once
  CHECK(seen == model);
  for (const auto& [k, v] : model) CHECK(t.at(k) == v);
}
}  // namespace

TEST_SUITE("fingerprint table") {
  TEST_CASE("the table agrees with std::map under random inserts, finds and erases") {
    table t;
    std::vector<std::uint64_t> keys(3000);
    for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = k;
    agree_with_map(t, keys, 11, 60000);
  }

  TEST_CASE("keys sharing one home bucket: long runs across the wraparound, erased from inside") {
    table t(kKnown);
    t.reserve(1000);  // 2048 buckets: no growth below
    REQUIRE(t.capacity() >= 1000);
    REQUIRE(t.capacity() < 2048);
    std::vector<std::uint64_t> keys;
    for (std::uint64_t j = 0; j < 300; ++j) keys.push_back(key_at(2040 + 2048 * j));  // home 2040
    for (std::uint64_t j = 0; j < 100; ++j) keys.push_back(key_at(j + 2048 * j));     // homes 0..99
    const std::size_t capacity = t.capacity();
    agree_with_map(t, keys, 5, 40000);
    CHECK(t.capacity() == capacity);
    CHECK(t.longest_run() > 200);  // the shared home made one long run, as intended here
  }

  TEST_CASE("an erase shifts the rest of its run back, across the end of the buckets") {
    table t(kKnown);  // 16 buckets once the first key is in
    const std::uint64_t a = key_at(15), b = key_at(15 + 16), c = key_at(15 + 32), d = key_at(0),
                        e = key_at(3);
    for (const auto k : {a, b, c, d, e}) t[k] = std::to_string(k);
    REQUIRE(t.capacity() == 12);  // 16 buckets
    // Bucket order: b (home 15, wrapped to 0), c (1), d (home 0, pushed to 2), e (3), a (15).
    CHECK(keys_in_order(t) == std::vector<std::uint64_t>{b, c, d, e, a});
    const std::string* where_d = &t.at(d);
    t.erase(t.find(a));
    // b back to 15, c to 0, d to 1; e stays at its home.
    CHECK(keys_in_order(t) == std::vector<std::uint64_t>{c, d, e, b});
    CHECK(&t.at(d) == where_d);  // the entry itself did not move
    for (const auto k : {b, c, d, e}) CHECK(t.at(k) == std::to_string(k));
    CHECK(t.find(a) == t.end());
    t.erase(t.find(c));  // from the middle of the wrapped run: d back to 0
    CHECK(keys_in_order(t) == std::vector<std::uint64_t>{d, e, b});
    t.erase(t.find(e));
    t.erase(t.find(b));
    CHECK(keys_in_order(t) == std::vector<std::uint64_t>{d});
    CHECK(t.longest_run() == 1);
  }

  TEST_CASE("keys alike in their low or high bits spread over the index (random seed)") {
    // Fingerprints come from clients: keys chosen to share the low bits, or the high bits, of
    // the word must not share a run (the seed's mixing reaches every bit).
    for (const int pattern : {0, 1, 2, 3}) {
      CAPTURE(pattern);
      table t;
      std::vector<std::uint64_t> keys;
      for (std::uint64_t i = 1; i <= 20000; ++i) {
        switch (pattern) {
          case 0:
            keys.push_back(i << 40);
            break;  // low 40 bits alike
          case 1:
            keys.push_back(0xABCDEF0000000000ull | i);
            break;  // high bits alike
          case 2:
            keys.push_back((i << 48) | 0x123456789ull);
            break;  // only the top 16
          default:
            keys.push_back(i * 0x10000ull * 0x10000ull * 16 + 7);  // multiples of 2^36
        }
      }
      for (const auto k : keys) t[k] = std::to_string(k);
      REQUIRE(t.size() == keys.size());
      for (const auto k : keys) REQUIRE(t.at(k) == std::to_string(k));
      for (std::size_t i = 0; i < keys.size(); i += 2) t.erase(t.find(keys[i]));
      for (std::size_t i = 0; i < keys.size(); ++i) {
        CHECK((t.find(keys[i]) == t.end()) == (i % 2 == 0));
      }
      // 10,000 keys in 32,768 buckets: a run of hundreds would mean the keys cluster (random
      // keys make runs of a few dozen at most; without the seed's mixing these make one run of
      // thousands). A count, not a time.
      CHECK(t.longest_run() < 400);
    }
  }

  TEST_CASE("exact and structural keys of the same value are different keys") {
    fingerprint_table<fingerprint_key, int> t;
    for (std::uint64_t v = 0; v < 1000; ++v) {
      t[{fingerprint_kind::exact, v}] = 1;
      t[{fingerprint_kind::structural, v}] = 2;
    }
    CHECK(t.size() == 2000);
    for (std::uint64_t v = 0; v < 1000; ++v) {
      CHECK(t.at({fingerprint_kind::exact, v}) == 1);
      CHECK(t.at({fingerprint_kind::structural, v}) == 2);
    }
    t.erase(t.find({fingerprint_kind::exact, 5}));
    CHECK(t.find({fingerprint_kind::exact, 5}) == t.end());
    CHECK(t.at({fingerprint_kind::structural, 5}) == 2);
  }

  TEST_CASE("growth keeps every entry, reserve makes room in advance, prefetch reads nothing") {
    table t;
    CHECK(t.capacity() == 0);
    t.prefetch(1);  // an empty table has no buckets of its own: still a valid hint
    std::size_t grew = 0, capacity = t.capacity();
    for (std::uint64_t k = 0; k < 50000; ++k) {
      t.prefetch(k);
      t[k] = std::to_string(k);
      CHECK(t.size() <= t.capacity());
      if (t.capacity() != capacity) ++grew;
      capacity = t.capacity();
    }
    CHECK(grew > 10);
    for (std::uint64_t k = 0; k < 50000; ++k) REQUIRE(t.at(k) == std::to_string(k));
    table r;
    r.reserve(50000);
    const std::size_t reserved = r.capacity();
    CHECK(reserved >= 50000);
    CHECK(reserved <= 2 * 50000);  // 80% of a power of two at most twice the need
    for (std::uint64_t k = 0; k < 50000; ++k) r[k] = "x";
    CHECK(r.capacity() == reserved);
    r.reserve(10);  // never shrinks
    CHECK(r.capacity() == reserved);
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
    CHECK(t.empty());  // NOLINT(bugprone-use-after-move): a moved-from table is empty and usable
    CHECK(t.find(5) == t.end());
    t[6] = "six";
    CHECK(t.at(6) == "six");
    t = std::move(u);  // the old entries of t go
    CHECK(t.at(5) == "five");
    CHECK(t.find(6) == t.end());
    t.clear();
    CHECK(t.empty());
    CHECK(t.find(5) == t.end());
    t[5] = "again";
    CHECK(t.at(5) == "again");
  }

  TEST_CASE("clear keeps the index's room, erases every entry and the table fills again") {
    table t;
    for (std::uint64_t k = 0; k < 5000; ++k) t[k] = "x";
    const std::size_t capacity = t.capacity();
    t.clear();
    CHECK(t.empty());
    CHECK(t.capacity() == capacity);
    CHECK(t.begin() == t.end());
    for (std::uint64_t k = 0; k < 5000; ++k) CHECK(t.find(k) == t.end());
    for (std::uint64_t k = 5000; k < 6000; ++k) t[k] = std::to_string(k);
    CHECK(t.size() == 1000);
    CHECK(keys_in_order(t).size() == 1000);
    for (std::uint64_t k = 5000; k < 6000; ++k) CHECK(t.at(k) == std::to_string(k));
  }

  TEST_CASE("fingerprint_key_hash spreads keys a client chose to collide in a standard set") {
    // With the value as its own hash, multiples of the bucket count all land in bucket 0.
    std::unordered_set<fingerprint_key, fingerprint_key_hash> set;
    set.reserve(20000);
    const std::size_t buckets = set.bucket_count();
    for (std::uint64_t i = 1; i <= 10000; ++i) {
      set.insert({fingerprint_kind::exact, i * buckets});
      set.insert({fingerprint_kind::structural, i * buckets});
    }
    REQUIRE(set.bucket_count() == buckets);  // no rehash: the same buckets the keys aimed at
    std::size_t longest = 0;
    for (std::size_t b = 0; b < buckets; ++b) longest = std::max(longest, set.bucket_size(b));
    CHECK(longest < 32);
    CHECK(set.size() == 20000);
    CHECK(set.contains({fingerprint_kind::structural, 77 * buckets}));
    CHECK_FALSE(set.contains({fingerprint_kind::structural, 77 * buckets + 1}));
  }
}

namespace {

// Two forms for the table: a big entry, and a small one holding only `n` (a big entry with
// an empty text).
struct small_value;
struct big_value {
  std::uint64_t n = 0;
  std::string text;  // a heap block for the sanitizers to watch
  big_value() = default;
  big_value(std::uint64_t v, std::string t) : n(v), text(std::move(t)) {}
  explicit big_value(small_value&& s);
};
struct small_value {
  std::uint64_t n = 0;
  explicit small_value(std::uint64_t v) : n(v) {}
  explicit small_value(big_value&& b) : n(b.n) {}
};
big_value::big_value(small_value&& s) : n(s.n) {}

using two_forms = fingerprint_table<std::uint64_t, big_value, small_value>;

struct seen {
  std::uint64_t n = 0;
  bool small = false;
};

std::map<std::uint64_t, seen> contents(const two_forms& t) {
  std::map<std::uint64_t, seen> out;
  t.for_each([&](std::uint64_t k, const auto& v) {
    const bool small = std::is_same_v<std::decay_t<decltype(v)>, small_value>;
    CHECK(out.emplace(k, seen{v.n, small}).second);  // each key once
  });
  return out;
}

}  // namespace

TEST_SUITE("fingerprint table") {
  TEST_CASE("two forms: entries convert both ways and agree with std::map under random steps") {
    two_forms t;
    std::map<std::uint64_t, seen> model;
    std::mt19937_64 rng(20261127);
    for (int step = 0; step < 60000; ++step) {
      const std::uint64_t k = rng() % 3000;
      const auto it = model.find(k);
      switch (rng() % 5) {
        case 0: {  // full(): created, or converted from the small form
          auto [v, created] = t.full(k);
          CHECK(created == (it == model.end()));
          if (created) {
            v->n = k * 7;
            v->text = "made";  // every full entry has a text, a converted one none yet
            model[k] = {k * 7, false};
          } else {
            CHECK(v->n == it->second.n);
            CHECK(v->text.empty() == it->second.small);  // a converted entry has no text
            if (it->second.small) v->text = "converted";
            it->second.small = false;
          }
          break;
        }
        case 1:  // shrink() a full entry
          if (it != model.end() && !it->second.small) {
            t.shrink(k);
            it->second.small = true;
          }
          break;
        case 2: {  // emplace_small() or emplace_full() a new one
          const bool small = rng() % 2 == 0;
          const bool made =
              small ? t.emplace_small(k, k) != nullptr : t.emplace_full(k, k, "text") != nullptr;
          CHECK(made == (it == model.end()));
          if (made) model[k] = {k, small};
          break;
        }
        case 3:
          if (rng() % 2 == 0) {
            CHECK(t.erase(k) == (it != model.end()));
          } else {  // take(): the entry as it was, then gone
            bool seen_it = false;
            CHECK(t.take(k, [&](std::uint64_t key, auto& v) {
              seen_it = true;
              CHECK(key == k);
              CHECK(v.n == it->second.n);
              CHECK(std::is_same_v<std::decay_t<decltype(v)>, small_value> == it->second.small);
            }) == (it != model.end()));
            CHECK(seen_it == (it != model.end()));
            CHECK_FALSE(t.contains(k));
          }
          if (it != model.end()) model.erase(it);
          break;
        default: {  // lookups of either form
          bool visited = false;
          t.visit(k, [&](std::uint64_t key, const auto& v) {
            visited = true;
            CHECK(key == k);
            CHECK(v.n == it->second.n);
          });
          CHECK(visited == (it != model.end()));
          CHECK(t.contains(k) == (it != model.end()));
          const big_value* full = t.find_full(k);
          CHECK((full != nullptr) == (it != model.end() && !it->second.small));
          const auto [p, n] = t.address(k);
          CHECK((p != nullptr) == (it != model.end()));
          if (p != nullptr) {
            CHECK(n == (it->second.small ? sizeof(two_forms::small_type)
                                         : sizeof(two_forms::value_type)));
          }
        }
      }
      CHECK(t.size() == model.size());
      if (step % 5000 == 0) {
        const auto now = contents(t);
        CHECK(now.size() == model.size());
        for (const auto& [key, s] : model) {
          const auto got = now.find(key);
          REQUIRE(got != now.end());
          CHECK(got->second.n == s.n);
          CHECK(got->second.small == s.small);
        }
      }
    }
    // A moved table keeps both forms; clear() destroys both (the sanitizers check the texts).
    two_forms moved = std::move(t);
    CHECK(moved.size() == model.size());
    CHECK(contents(moved).size() == model.size());
    moved.clear();
    CHECK(moved.empty());
    CHECK(contents(moved).empty());
    CHECK(moved.full(1).second);
  }
}
