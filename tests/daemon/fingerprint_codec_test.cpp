// The `data` blob of a fingerprint row (docs/storage.md, "Fingerprint data"): the compact
// format written since schema 8 round-trips every field bit for bit, the fixed format of
// schemas 2 to 7 is still read, and no damaged blob is taken for a row.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "store/byte_codec.hpp"
#include "store/fingerprint_codec.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

// Bit for bit (operator== would take -0.0 for 0 and never match a NaN).
bool same_stats(const fingerprint_stats& a, const fingerprint_stats& b) {
  const auto bits = [](double d) { return std::bit_cast<std::uint64_t>(d); };
  if (a.tool != b.tool || a.summary != b.summary || a.calls != b.calls || a.counted != b.counted ||
      a.level != b.level || a.level_calls != b.level_calls || a.level_workers != b.level_workers ||
      a.workers != b.workers || a.results != b.results || a.wasted.tokens != b.wasted.tokens ||
      a.booked.tokens != b.booked.tokens || a.window.size() != b.window.size()) {
    return false;
  }
  if (bits(a.first_seen) != bits(b.first_seen) || bits(a.last_seen) != bits(b.last_seen) ||
      bits(a.level_t) != bits(b.level_t) || bits(a.wasted.amount) != bits(b.wasted.amount) ||
      bits(a.booked.amount) != bits(b.booked.amount)) {
    return false;
  }
  for (std::size_t i = 0; i < a.window.size(); ++i) {
    if (bits(a.window[i].t) != bits(b.window[i].t) || a.window[i].worker != b.window[i].worker ||
        a.window[i].counted != b.window[i].counted) {
      return false;
    }
  }
  return true;
}

// A random row: some fields left at zero (the compact format leaves them out), others at the
// edges of their ranges.
fingerprint_stats random_row(std::mt19937_64& rng) {
  const auto pick = [&](std::uint64_t n) { return rng() % n; };
  const auto big = [&] {
    switch (pick(4)) {
      case 0:
        return std::uint64_t{0};
      case 1:
        return pick(200);
      case 2:
        return std::numeric_limits<std::uint64_t>::max() - pick(3);
      default:
        return rng();
    }
  };
  const auto time = [&] {
    switch (pick(9)) {
      case 0:
        return 0.0;
      case 1:
        return -0.0;
      case 2:
        return std::numeric_limits<double>::quiet_NaN();
      case 3:
        return -std::numeric_limits<double>::infinity();
      case 4:
        return std::numeric_limits<double>::denorm_min();
      case 5:
        return std::numeric_limits<double>::max();
      default:
        return static_cast<double>(rng() % 1000000) / 7.0;
    }
  };
  fingerprint_stats f;
  f.tool = std::string(pick(20), 't');
  f.summary = std::string(pick(3) == 0 ? 300 : pick(40), 's');
  f.calls = big();
  f.counted = big();
  f.first_seen = time();
  f.last_seen = pick(2) == 0 ? f.first_seen : time();
  f.level = static_cast<severity>(pick(4));
  if (pick(2) == 0) {
    f.level_t = time();
    f.level_calls = static_cast<std::uint32_t>(big());
    f.level_workers = static_cast<std::uint32_t>(pick(3) == 0 ? ~0u : pick(20));
  }
  for (std::uint64_t n = pick(4), id = 0; n > 0; --n) {
    id += 1 + pick(pick(2) == 0 ? 3 : 100000);
    f.workers.push_back(static_cast<std::uint32_t>(id));
  }
  for (std::uint64_t n = pick(3) == 0 ? pick(40) : pick(3); n > 0; --n) {
    const double t = pick(2) == 0 ? f.last_seen : time();
    f.window.push_back(
        {t, static_cast<std::uint32_t>(pick(3) == 0 ? ~0u : pick(50)), pick(2) == 0});
  }
  for (std::uint64_t n = pick(4); n > 0; --n) f.results.push_back(rng());
  if (pick(2) == 0) f.wasted = {big(), pick(2) == 0 ? time() : static_cast<double>(pick(99))};
  if (pick(3) == 0) f.booked = {pick(2) == 0 ? 0 : big(), pick(2) == 0 ? -0.0 : time()};
  return f;
}

// The fixed format of schemas 2 to 7, as those builds wrote it.
std::string fixed_blob(const fingerprint_stats& f) {
  std::string out;
  byte_writer w(out);
  w.put(static_cast<std::uint8_t>(f.level));
  w.put(f.calls);
  w.put(f.counted);
  w.put(f.first_seen);
  w.put(f.last_seen);
  w.put(f.level_t);
  w.put(f.level_calls);
  w.put(f.level_workers);
  w.str(f.tool);
  w.str(f.summary);
  w.put(static_cast<std::uint32_t>(f.workers.size()));
  w.put(static_cast<std::uint32_t>(f.window.size()));
  w.put(static_cast<std::uint32_t>(f.results.size()));
  for (auto id : f.workers) w.put(id);
  for (const auto& c : f.window) {
    w.put(c.t);
    w.put(c.worker);
    w.put(static_cast<std::uint8_t>(c.counted ? 1 : 0));
  }
  for (auto r : f.results) w.put(r);
  w.put(f.wasted.tokens);
  w.put(f.wasted.amount);
  w.put(f.booked.tokens);
  w.put(f.booked.amount);
  return out;
}

// A fingerprint called once, as most are.
fingerprint_stats once_row() {
  fingerprint_stats f;
  f.tool = "search";
  f.summary = "query=bench";
  f.calls = 1;
  f.first_seen = f.last_seen = 1764201600.25;
  f.workers.push_back(3);
  f.window.push_back({f.last_seen, 3, false});
  f.results.push_back(0x8f2c11d0a4b3e975ULL);
  return f;
}

}  // namespace

TEST_SUITE("fingerprint codec") {
  TEST_CASE("the compact format round-trips random rows bit for bit") {
    std::mt19937_64 rng(8);
    std::string blob;
    for (int i = 0; i < 20000; ++i) {
      const fingerprint_stats f = random_row(rng);
      encode_fingerprint(f, blob);
      fingerprint_stats back;
      back.tool = "left over";  // decoding into a reused row (the loader's)
      back.wasted = {1, 1};
      back.level_t = 9;
      REQUIRE(decode_fingerprint(blob, back));
      CHECK(same_stats(f, back));
    }
  }

  TEST_CASE("a fingerprint called once takes a third of the fixed format's bytes") {
    std::string blob;
    encode_fingerprint(once_row(), blob);
    // head, flags, calls, counted, first_seen (8), tool (1 + 6), summary (1 + 11), one worker
    // (1 + 1), one window call at last_seen (1 + tag + worker), one result (1 + 8).
    CHECK(blob.size() == 1 + 1 + 1 + 1 + 8 + 7 + 12 + 2 + 3 + 9);
    CHECK(fixed_blob(once_row()).size() == 139);
  }

  TEST_CASE("the fixed format of schemas 2 to 7 is still read") {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 5000; ++i) {
      const fingerprint_stats f = random_row(rng);
      fingerprint_stats back;
      REQUIRE(decode_fingerprint(fixed_blob(f), back));
      CHECK(same_stats(f, back));
    }
  }

  TEST_CASE("no damaged blob is taken for a row: cut short, extended, a bit flipped") {
    std::mt19937_64 rng(9);
    std::string blob;
    for (int i = 0; i < 300; ++i) {
      const fingerprint_stats f = random_row(rng);
      for (const std::string& good : {fixed_blob(f), (encode_fingerprint(f, blob), blob)}) {
        fingerprint_stats back;
        for (std::size_t n = 0; n < good.size(); ++n) {
          CHECK_FALSE(decode_fingerprint(std::string_view(good).substr(0, n), back));
        }
        CHECK_FALSE(decode_fingerprint(good + '\0', back));
        // A flipped bit is refused or decodes to some row (the bytes of a double or a hash have
        // no redundancy); it never reads past the blob (the sanitizers watch), and what it
        // decodes to is a row the format holds: written again, it reads back the same.
        for (std::size_t at = 0; at < good.size(); ++at) {
          std::string bad = good;
          bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8)));
          if (!decode_fingerprint(bad, back)) continue;
          std::string again;
          encode_fingerprint(back, again);
          fingerprint_stats twice;
          REQUIRE(decode_fingerprint(again, twice));
          CHECK(same_stats(back, twice));
        }
      }
    }
  }

  TEST_CASE("a varint-length string is checked against the bytes after its length") {
    // Two bytes left before the length, one after it: a length of 2 runs past the end.
    std::string_view s;
    CHECK_FALSE(byte_reader(std::string_view("\x02"
                                             "a",
                                             2))
                    .varstr(s));
    byte_reader fits(
        std::string_view("\x01"
                         "a",
                         2));
    REQUIRE(fits.varstr(s));
    CHECK(s == "a");
    CHECK(fits.at_end());
    // A two-byte length (128) with 127 bytes after it.
    const std::string long_one = std::string("\x80\x01", 2) + std::string(127, 'x');
    CHECK_FALSE(byte_reader(long_one).varstr(s));
  }

  TEST_CASE("the compact format refuses what it cannot hold: unknown flags, huge counts") {
    std::string blob;
    encode_fingerprint(once_row(), blob);
    fingerprint_stats back;
    REQUIRE(decode_fingerprint(blob, back));
    std::string bad = blob;
    bad[1] = static_cast<char>(0x10);  // a flag no build writes
    CHECK_FALSE(decode_fingerprint(bad, back));
    // A window call's tag with an unknown bit: the tag sits after the window's count.
    bad = blob;
    const std::size_t tag_at = 1 + 1 + 1 + 1 + 8 + 7 + 12 + 2 + 1;
    REQUIRE(static_cast<std::uint8_t>(bad[tag_at]) == 2);  // at last_seen, not counted
    bad[tag_at] = static_cast<char>(0x06);
    CHECK_FALSE(decode_fingerprint(bad, back));
    // A count of workers far beyond the bytes left: refused before anything is sized.
    std::string huge(blob.substr(0, 1 + 1 + 1 + 1 + 8 + 7 + 12));
    byte_writer w(huge);
    w.varint(std::uint64_t{1} << 40);
    CHECK_FALSE(decode_fingerprint(huge, back));
    // A window or results list longer than any state holds, with the bytes to back it.
    const auto with_lists = [&](std::uint64_t window, std::uint64_t results) {
      std::string b(blob.substr(0, 1 + 1 + 1 + 1 + 8 + 7 + 12));
      byte_writer lists(b);
      lists.varint(1);  // one worker, id 3
      lists.varint(3);
      lists.varint(window);
      for (std::uint64_t i = 0; i < window; ++i) {
        lists.put(std::uint8_t{2});  // at last_seen, not counted
        lists.varint(3);
      }
      lists.varint(results);
      for (std::uint64_t i = 0; i < results; ++i) lists.put(i);
      return b;
    };
    CHECK(decode_fingerprint(with_lists(100000, 64), back));
    CHECK(back.window.size() == 100000);
    CHECK_FALSE(decode_fingerprint(with_lists(100001, 0), back));
    CHECK_FALSE(decode_fingerprint(with_lists(1, 65), back));
    // A varint running past 64 bits, a level_calls past 32 bits.
    std::string over(blob.substr(0, 2));
    over.append(10, static_cast<char>(0xFF));
    over.push_back(0x01);
    CHECK_FALSE(decode_fingerprint(over, back));
    fingerprint_stats f = once_row();
    f.level_t = 1;
    encode_fingerprint(f, blob);
    std::string wide = blob.substr(0, 1 + 1 + 1 + 1 + 8 + 8);
    byte_writer(wide).varint(std::uint64_t{1} << 32);
    wide += blob.substr(1 + 1 + 1 + 1 + 8 + 8 + 1);
    CHECK_FALSE(decode_fingerprint(wide, back));
  }
}
