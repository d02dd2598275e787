#include <doctest/doctest.h>

#include <random>

#include "loopguard/canonical_args.hpp"

using loopguard::canonical_args;
using nlohmann::json;

namespace {

// A random JSON document with awkward parts: escapes, non-ASCII, numbers in many spellings,
// nesting, duplicate-free keys in random order.
std::string random_json(std::mt19937& rng, int depth) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const char* kStrings[] = {"\"\"",
                                   "\"plain\"",
                                   "\"tab\\there\"",
                                   "\"q\\\"uote\"",
                                   "\"\\u00e9t\\u00e9\"",
                                   "\"caf\xc3\xa9\"",
                                   "\"\\ud83d\\ude00\"",
                                   "\"slash\\/ok\"",
                                   "\"ctl\\u0001\"",
                                   "\"back\\\\slash\""};
  static const char* kNumbers[] = {"0",
                                   "-0",
                                   "1",
                                   "1.0",
                                   "1e2",
                                   "-7",
                                   "2.50",
                                   "0.1",
                                   "1E-3",
                                   "123456789012345678901234",
                                   "18446744073709551615",
                                   "-9223372036854775808",
                                   "3.14159"};
  const int kind = depth > 3 ? pick(4) : pick(6);
  switch (kind) {
    case 0:
      return kStrings[pick(10)];
    case 1:
      return kNumbers[pick(13)];
    case 2:
      return pick(2) ? "true" : (pick(2) ? "false" : "null");
    case 3:
      return kStrings[pick(10)];
    case 4: {
      std::string out = "[";
      const int n = pick(4);
      for (int i = 0; i < n; ++i) out += (i ? " , " : "") + random_json(rng, depth + 1);
      return out + "]";
    }
    default: {
      std::string out = "{ ";
      const int n = pick(5);
      std::vector<int> keys{0, 1, 2, 3, 4, 5, 6, 7};
      std::shuffle(keys.begin(), keys.end(), rng);
      for (int i = 0; i < n; ++i) {
        out += (i ? ",\n" : "") + std::string("\"k") +
               std::to_string(keys[static_cast<std::size_t>(i)]) +
               "\" :" + random_json(rng, depth + 1);
      }
      return out + " }";
    }
  }
}

}  // namespace

TEST_SUITE("canonical_args") {
  TEST_CASE("the text parser agrees with nlohmann + canonical_json on random documents") {
    std::mt19937 rng(20261122);
    const loopguard::key_set skip{"k3"};
    for (int i = 0; i < 3000; ++i) {
      const std::string text = random_json(rng, 0);
      CAPTURE(text);
      canonical_args fast;
      REQUIRE(loopguard::parse_canonical_args(text, &skip, fast));
      const canonical_args slow = loopguard::make_canonical_args(json::parse(text), &skip);
      CHECK(fast.canonical() == slow.canonical());
      CHECK(fast.canonical() == loopguard::canonical_json(json::parse(text), &skip));
      REQUIRE(fast.members.size() == slow.members.size());
      for (std::size_t m = 0; m < fast.members.size(); ++m) {
        CHECK(fast.members[m].key == slow.members[m].key);
        CHECK(fast.members[m].text == slow.members[m].text);
      }
    }
  }

  TEST_CASE("invalid JSON is refused, as nlohmann refuses it") {
    const char* bad[] = {"",
                         "{",
                         "{\"a\":}",
                         "[1,]",
                         "{\"a\" 1}",
                         "01",
                         "1.",
                         "-",
                         "\"unterminated",
                         "tru",
                         "{} x",
                         "\"\\x\"",
                         "\"\\ud800\"",
                         "\"a\nb\"",
                         "[1 2]",
                         "\"\xff\"",
                         "\"\xc3\"",
                         "{\"a\":1,}",
                         "nul",
                         "+1",
                         ".5",
                         "1e",
                         "\"\\u12\"",
                         "{1:2}"};
    for (const char* text : bad) {
      CAPTURE(text);
      canonical_args out;
      CHECK_FALSE(loopguard::parse_canonical_args(text, nullptr, out));
      json parsed;
      CHECK_THROWS_AS(parsed = json::parse(text), json::parse_error);
    }
  }

  TEST_CASE("duplicate keys: the last one wins") {
    canonical_args out;
    REQUIRE(loopguard::parse_canonical_args(R"({"a":1,"b":2,"a":3})", nullptr, out));
    CHECK(out.canonical() == R"({"a":3,"b":2})");
  }

  TEST_CASE("nesting too deep is refused, not a crash") {
    std::string deep(100000, '[');
    canonical_args out;
    CHECK_FALSE(loopguard::parse_canonical_args(deep, nullptr, out));
  }
}
