#include <doctest/doctest.h>

#include <random>

#include "loopguard/canonical_args.hpp"
#include "loopguard/json_input.hpp"

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
    const char* bad[] = {"",         "{",         "{\"a\":}",       "[1,]", "{\"a\" 1}", "01",
                         "1.",       "-",         "\"unterminated", "tru",  "{} x",      "\"\\x\"",
                         "\"a\nb\"", "[1 2]",     "{\"a\":1,}",     "nul",  "+1",        ".5",
                         "1e",       "\"\\u12\"", "{1:2}"};
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

  TEST_CASE("nesting up to json_input::kMaxDepth is accepted, one more level is refused") {
    const auto nested = [](std::size_t n) {
      return std::string(n, '[') + "1" + std::string(n, ']');
    };
    constexpr std::size_t k = loopguard::json_input::kMaxDepth;
    canonical_args out;
    CHECK(loopguard::parse_canonical_args(nested(k), nullptr, out));
    const auto doc = loopguard::json_input::parse(nested(k));
    REQUIRE(doc.has_value());
    CHECK(out.canonical() == loopguard::canonical_json(doc->value));
    CHECK_FALSE(loopguard::parse_canonical_args(nested(k + 1), nullptr, out));
    CHECK_FALSE(loopguard::json_input::parse(nested(k + 1)).has_value());
    const std::string objects = [&] {
      std::string s;
      for (std::size_t i = 0; i < k + 1; ++i) s += "{\"a\":";
      return s + "1" + std::string(k + 1, '}');
    }();
    CHECK_FALSE(loopguard::parse_canonical_args(objects, nullptr, out));
    CHECK_FALSE(loopguard::json_input::parse(objects).has_value());
  }

  TEST_CASE("invalid UTF-8 and lone surrogate escapes become U+FFFD, as json_input reads them") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"\"\\ud800\"", "\"\xEF\xBF\xBD\""},
        {"\"\\udcff\"", "\"\xEF\xBF\xBD\""},
        {"\"a\\ud800\\u0041\"",
         "\"a\xEF\xBF\xBD"
         "A\""},
        {"\"\\ud83d\\ude00\"", "\"\xF0\x9F\x98\x80\""},
        {"\"\xff\"", "\"\xEF\xBF\xBD\""},
        {"\"\xc3\"", "\"\xEF\xBF\xBD\""},
        {"{\"k\\udcff\":\"x\xe2\x82\"}", "{\"k\xEF\xBF\xBD\":\"x\xEF\xBF\xBD\"}"},
    };
    for (const auto& [text, canonical] : cases) {
      CAPTURE(text);
      canonical_args out;
      REQUIRE(loopguard::parse_canonical_args(text, nullptr, out));
      CHECK(out.canonical() == canonical);
      const auto doc = loopguard::json_input::parse(text);
      REQUIRE(doc.has_value());
      CHECK((doc->repairs > 0) == (canonical.find("\xEF\xBF\xBD") != std::string::npos));
      CHECK(loopguard::canonical_json(doc->value) == canonical);
    }
  }

  TEST_CASE(
      "regression: an underflowing number reads as 0 on both paths, an overflowing one on "
      "neither") {
    canonical_args out;
    REQUIRE(loopguard::parse_canonical_args("[35e-635]", nullptr, out));
    const auto doc = loopguard::json_input::parse("[35e-635]");
    REQUIRE(doc.has_value());
    CHECK(out.canonical() == loopguard::canonical_json(doc->value));
    CHECK(out.canonical() == "[0]");
    CHECK_FALSE(loopguard::parse_canonical_args("[1e400]", nullptr, out));
    const auto refused = loopguard::json_input::parse("[1e400]");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message().find("1e400") != std::string::npos);
  }

  TEST_CASE("regression (fuzz): a NUL byte is refused and a leading BOM skipped on both paths") {
    using namespace std::string_literals;
    for (const std::string& text : {"1\0x"s, "{\"a\":1}\0junk"s, "[\"a\0\"]"s, "\0"s}) {
      canonical_args out;
      CHECK_FALSE(loopguard::parse_canonical_args(text, nullptr, out));
      const auto refused = loopguard::json_input::parse(text);
      REQUIRE_FALSE(refused.has_value());
      CHECK(refused.error().message().find("NUL") != std::string::npos);
    }
    const std::string bom = "\xEF\xBB\xBF{\"bom\":1}";
    canonical_args out;
    REQUIRE(loopguard::parse_canonical_args(bom, nullptr, out));
    const auto doc = loopguard::json_input::parse(bom);
    REQUIRE(doc.has_value());
    CHECK(out.canonical() == loopguard::canonical_json(doc->value));
  }

  TEST_CASE("a JSON text longer than json_input::kMaxTextBytes is refused on both paths") {
    std::string text(loopguard::json_input::kMaxTextBytes + 1, ' ');
    text[0] = '1';
    canonical_args out;
    CHECK_FALSE(loopguard::parse_canonical_args(text, nullptr, out));
    const auto refused = loopguard::json_input::parse(text);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message().find("more than the limit") != std::string::npos);
  }
}
