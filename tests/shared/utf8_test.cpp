#include "loopguard/utf8.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>

using loopguard::utf8::decode;
using loopguard::utf8::encode;
using loopguard::utf8::is_ascii;

namespace {
constexpr char32_t fffd = loopguard::utf8::replacement_character;

std::string bytes(std::initializer_list<unsigned> list) {
  std::string s;
  for (unsigned b : list) s.push_back(static_cast<char>(b));
  return s;
}
}  // namespace

TEST_SUITE("utf8") {
  TEST_CASE("utf8: decodes one to four byte sequences to code points") {
    CHECK(decode("") == U"");
    CHECK(decode("abc") == U"abc");
    CHECK(decode("caf\xC3\xA9") == U"caf\u00E9");
    CHECK(decode("\xE6\x95\xB0") == U"\u6570");
    CHECK(decode("\xF0\x9F\x98\x80!") == U"\U0001F600!");
    CHECK(decode(bytes({0xF4, 0x8F, 0xBF, 0xBF})) == U"\U0010FFFF");
    CHECK(decode(std::string("a\0b", 3)) == std::u32string(U"a\0b", 3));
  }

  TEST_CASE("utf8: replaces each maximal ill-formed subpart with one U+FFFD") {
    SUBCASE("stray continuation bytes") {
      CHECK(decode(bytes({0x80})) == std::u32string(1, fffd));
      CHECK(decode(bytes({0x61, 0xBF, 0x80, 0x62})) == std::u32string{U'a', fffd, fffd, U'b'});
    }
    SUBCASE("bytes that never start a sequence") {
      CHECK(decode(bytes({0xC0, 0x80})) == std::u32string(2, fffd));  // overlong NUL
      CHECK(decode(bytes({0xC1, 0xBF})) == std::u32string(2, fffd));
      CHECK(decode(bytes({0xF5, 0x80, 0x80, 0x80})) == std::u32string(4, fffd));
      CHECK(decode(bytes({0xFF})) == std::u32string(1, fffd));
    }
    SUBCASE("overlong, surrogate and out-of-range forms") {
      CHECK(decode(bytes({0xE0, 0x80, 0x80})) == std::u32string(3, fffd));
      CHECK(decode(bytes({0xED, 0xA0, 0x80})) == std::u32string(3, fffd));
      CHECK(decode(bytes({0xF0, 0x80, 0x80, 0x80})) == std::u32string(4, fffd));
      CHECK(decode(bytes({0xF4, 0x90, 0x80, 0x80})) == std::u32string(4, fffd));
    }
    SUBCASE("truncated sequences, at the end or before another character") {
      CHECK(decode(bytes({0xF0, 0x9F, 0x98})) == std::u32string(1, fffd));
      CHECK(decode(bytes({0xF0, 0x9F, 0x98, 0x61})) == std::u32string{fffd, U'a'});
      CHECK(decode(bytes({0xE6, 0x95, 0xE6, 0x95, 0xB0})) == std::u32string{fffd, U'\u6570'});
      CHECK(decode(bytes({0xC3})) == std::u32string(1, fffd));
    }
  }

  TEST_CASE("utf8: decoding arbitrary bytes never fails and yields only scalar values") {
    std::mt19937 gen(12345);  // fixed seed
    std::uniform_int_distribution<int> length(0, 64);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int round = 0; round < 20000; ++round) {
      std::string s;
      const int n = length(gen);
      for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(byte(gen)));
      const std::u32string d = decode(s);
      CHECK(d.size() <= s.size());
      for (char32_t c : d) {
        REQUIRE(c <= 0x10FFFF);
        REQUIRE((c < 0xD800 || c > 0xDFFF));
      }
      // Decoding is idempotent on its own output.
      REQUIRE(decode(encode(d)) == d);
    }
  }

  TEST_CASE("utf8: is_valid finds an ill-formed byte anywhere in mostly-ASCII text") {
    // is_valid skips eight ASCII bytes at a time: one odd byte at every offset and length.
    // The reference: text is valid exactly when repairing it changes nothing.
    std::mt19937 gen(77);
    for (std::size_t n = 0; n <= 40; ++n) {
      for (std::size_t at = 0; at < n; ++at) {
        for (const std::string& odd : {bytes({0x80}), bytes({0xC3, 0xA9}), bytes({0xE2, 0x82}),
                                       bytes({0xF0, 0x9F, 0x98, 0x80}), bytes({0xFF})}) {
          std::string s(n, 'a');
          s.replace(at, 1, odd);
          if (gen() % 2 == 0) s[gen() % s.size()] = 'z';
          CAPTURE(s);
          CHECK(loopguard::utf8::is_valid(s) == (loopguard::utf8::repair(s) == s));
        }
      }
      CHECK(loopguard::utf8::is_valid(std::string(n, 'a')));
    }
  }

  TEST_CASE("utf8: encode and decode round-trip every scalar value") {
    for (char32_t c = 0; c <= 0x10FFFF; c += (c < 0x1000 ? 1 : 97)) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      const std::u32string one(1, c);
      REQUIRE(decode(encode(one)) == one);
    }
    CHECK(encode(U"a\u00E9\u6570\U0001F600") == "a\xC3\xA9\xE6\x95\xB0\xF0\x9F\x98\x80");
  }

  TEST_CASE("utf8: encode writes U+FFFD for surrogates and values above U+10FFFF") {
    CHECK(encode(std::u32string{0xD800}) == "\xEF\xBF\xBD");
    CHECK(encode(std::u32string{0x110000}) == "\xEF\xBF\xBD");
  }

  TEST_CASE("utf8: is_ascii is true exactly when no byte has the high bit") {
    CHECK(is_ascii(""));
    CHECK(is_ascii("plain text, longer than eight bytes"));
    CHECK_FALSE(is_ascii("plain text, longer than eight bytes\xC3\xA9"));
    CHECK_FALSE(is_ascii("\x80"));
    CHECK_FALSE(is_ascii("abcdefg\xFF"));
  }
}
