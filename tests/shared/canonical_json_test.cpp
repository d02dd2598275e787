#include <doctest/doctest.h>

#include "loopguard/canonical_json.hpp"

using loopguard::canonical_json;
using nlohmann::json;

TEST_SUITE("canonical_json") {
  TEST_CASE("key order and whitespace never change the canonical form") {
    const auto a = json::parse(R"({"b": 1, "a": {"y": [1, 2], "x": "s"}})");
    const auto b = json::parse(R"({ "a" : { "x":"s","y":[1,2] },"b":1 })");
    CHECK(canonical_json(a) == canonical_json(b));
    CHECK(canonical_json(a) == R"({"a":{"x":"s","y":[1,2]},"b":1})");
  }

  TEST_CASE("array order is significant") {
    CHECK(canonical_json(json::parse("[1,2]")) != canonical_json(json::parse("[2,1]")));
  }

  TEST_CASE("every number has one spelling") {
    const char* ones[] = {"1", "1.0", "1e0", "1.00", "10e-1", "0.1e1"};
    for (const char* s : ones) {
      CAPTURE(s);
      CHECK(canonical_json(json::parse(s)) == "1");
    }
    CHECK(canonical_json(json::parse("-0.0")) == "0");
    CHECK(canonical_json(json::parse("-0")) == "0");
    CHECK(canonical_json(json::parse("1e2")) == "100");
    CHECK(canonical_json(json::parse("2.5")) == "2.5");
    CHECK(canonical_json(json::parse("2.50")) == "2.5");
    CHECK(canonical_json(json::parse("-7")) == "-7");
    CHECK(canonical_json(json::parse("18446744073709551615")) == "18446744073709551615");
    CHECK(canonical_json(json::parse("1e300")) == "1e+300");
    CHECK(canonical_json(json::parse("0.1")) == "0.1");
  }

  TEST_CASE("different values stay different") {
    CHECK(canonical_json(json::parse("1")) != canonical_json(json::parse("\"1\"")));
    CHECK(canonical_json(json::parse("1")) != canonical_json(json::parse("1.5")));
    CHECK(canonical_json(json::parse("null")) != canonical_json(json::parse("false")));
    CHECK(canonical_json(json::parse(R"({"a":1})")) != canonical_json(json::parse(R"({"a":2})")));
  }

  TEST_CASE("strings: escapes have one spelling, non-ASCII is raw UTF-8") {
    CHECK(canonical_json(json::parse(R"("\u00e9")")) == "\"\xc3\xa9\"");
    CHECK(canonical_json(json::parse("\"\xc3\xa9\"")) == "\"\xc3\xa9\"");
    CHECK(canonical_json(json::parse(R"("\/")")) == "\"/\"");
    CHECK(canonical_json(json::parse(R"("a\"b\\c\n\t\u0001")")) == R"("a\"b\\c\n\t\u0001")");
  }

  TEST_CASE("skip keys are dropped at every depth") {
    const loopguard::key_set skip{"timestamp", "request_id"};
    const auto a = json::parse(R"({"q":"x","timestamp":1,"nested":{"request_id":"r1","k":2}})");
    const auto b = json::parse(R"({"q":"x","timestamp":2,"nested":{"request_id":"r2","k":2}})");
    CHECK(canonical_json(a, &skip) == canonical_json(b, &skip));
    CHECK(canonical_json(a, &skip) == R"({"nested":{"k":2},"q":"x"})");
    CHECK(canonical_json(a) != canonical_json(b));
  }
}
