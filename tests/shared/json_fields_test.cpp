#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "loopguard/json_fields.hpp"

using loopguard::json_fields::choice;
using loopguard::json_fields::options;
using loopguard::json_fields::reader;
using loopguard::json_fields::required;
using loopguard::json_fields::unknown_keys;
using nlohmann::json;

namespace {
enum class mode { consecutive, window, both };

// The error of reading `key` of `text` as an integer in 1..1000 (empty when it reads).
std::string integer_error(const char* text, std::uint32_t& out) {
  const json doc = json::parse(text);
  reader r(doc);
  r.integer("a.b", out, 1, 1000);
  return r.finish().message();
}
}  // namespace

TEST_SUITE("json_fields") {
  TEST_CASE("fields are read by key path through nested objects") {
    const json doc = json::parse(R"({"detectors":{"exact":{"warn_at":4,"enabled":false}}})");
    reader r(doc);
    std::uint32_t warn_at = 3;
    bool enabled = true;
    CHECK(r.integer("detectors.exact.warn_at", warn_at, 1, 1000));
    CHECK(r.boolean("detectors.exact.enabled", enabled));
    CHECK(r.finish().ok());
    CHECK(warn_at == 4);
    CHECK_FALSE(enabled);
  }

  TEST_CASE("an absent field keeps the caller's value, a required one is an error") {
    const json doc = json::parse(R"({"a":{}})");
    reader r(doc);
    std::uint64_t n = 7;
    CHECK_FALSE(r.integer("a.b", n));
    CHECK_FALSE(r.integer("x.y.z", n));
    CHECK(n == 7);
    CHECK(r.finish().ok());

    reader strict(doc);
    CHECK_FALSE(strict.integer(required("a.b"), n));
    CHECK(strict.finish().message() == "a.b: expected a non-negative integer, got nothing");
  }

  TEST_CASE("errors name the path, what was expected and what came") {
    std::uint32_t n = 0;
    CHECK(integer_error(R"({"a":{"b":"x"}})", n) ==
          R"(a.b: expected an integer in 1..1000, got "x")");
    CHECK(integer_error(R"({"a":{"b":0}})", n) == "a.b: expected an integer in 1..1000, got 0");
    CHECK(integer_error(R"({"a":{"b":1001}})", n) ==
          "a.b: expected an integer in 1..1000, got 1001");
    CHECK(integer_error(R"({"a":{"b":-1}})", n) == "a.b: expected an integer in 1..1000, got -1");
    CHECK(integer_error(R"({"a":{"b":null}})", n) ==
          "a.b: expected an integer in 1..1000, got null");
    CHECK(integer_error(R"({"a":5})", n) == "a: expected an object, got 5");
    CHECK(integer_error(R"([1])", n) == "document: expected an object, got [1]");
    CHECK(n == 0);
  }

  TEST_CASE("10.0 is the integer 10, 10.5 is not an integer") {
    std::uint32_t n = 0;
    CHECK(integer_error(R"({"a":{"b":10.0}})", n) == "");
    CHECK(n == 10);
    CHECK(integer_error(R"({"a":{"b":1e2}})", n) == "");
    CHECK(n == 100);
    CHECK(integer_error(R"({"a":{"b":10.5}})", n) ==
          "a.b: expected an integer in 1..1000, got 10.5");
    CHECK(integer_error(R"({"a":{"b":-0.0}})", n) ==
          "a.b: expected an integer in 1..1000, got -0.0");
    CHECK(n == 100);
  }

  TEST_CASE("integers at the edges of the type") {
    const json doc = json::parse(R"({"max":18446744073709551615,"big":1e19,"huge":1e30})");
    reader r(doc);
    std::uint64_t v = 0;
    CHECK(r.integer("max", v));
    CHECK(v == UINT64_MAX);
    CHECK(r.integer("big", v));
    CHECK(v == 10000000000000000000ULL);
    CHECK_FALSE(r.integer("huge", v));
    CHECK(r.finish().message() == "huge: expected a non-negative integer, got 1e+30");
    std::uint32_t small = 0;
    reader r2(doc);
    CHECK_FALSE(r2.integer("max", small));
    CHECK(r2.finish().message() ==
          "max: expected an integer in 0..4294967295, got 18446744073709551615");
  }

  TEST_CASE("numbers, booleans, strings, string arrays and one-of, with their wording") {
    const json doc = json::parse(
        R"({"t":101,"b":"yes","s":5,"long":"abcdef","list":["a",1],"mode":"sometimes"})");
    const auto first_error = [&](auto read) {
      reader r(doc, {.unknown = unknown_keys::ignore});
      read(r);
      return r.finish().message();
    };
    double d = 0;
    bool b = false;
    std::string s;
    std::vector<std::string> list;
    mode m = mode::both;
    CHECK(first_error([&](reader& r) { r.number("t", d, 0, 100); }) ==
          "t: expected a number in 0..100, got 101");
    CHECK(first_error([&](reader& r) { r.boolean("b", b); }) ==
          R"(b: expected true or false, got "yes")");
    CHECK(first_error([&](reader& r) { r.string("s", s); }) == "s: expected a string, got 5");
    CHECK(first_error([&](reader& r) { r.string("long", s, 3); }) ==
          R"(long: expected a string of at most 3 bytes, got "abcdef")");
    CHECK(first_error([&](reader& r) { r.strings("list", list); }) ==
          R"(list: expected an array of strings, got ["a",1])");
    CHECK(first_error([&](reader& r) {
            r.one_of("mode", m,
                     {choice<mode>{"consecutive", mode::consecutive},
                      choice<mode>{"window", mode::window}, choice<mode>{"both", mode::both}});
          }) == R"(mode: expected one of consecutive, window, both, got "sometimes")");
    CHECK(d == 0);
    CHECK(s.empty());
    CHECK(list.empty());
    CHECK(m == mode::both);
  }

  TEST_CASE("one_of stores the matching value") {
    const json doc = json::parse(R"({"mode":"window"})");
    reader r(doc);
    mode m = mode::both;
    CHECK(r.one_of(
        "mode", m,
        {choice<mode>{"consecutive", mode::consecutive}, choice<mode>{"window", mode::window}}));
    CHECK(m == mode::window);
    CHECK(r.finish().ok());
  }

  TEST_CASE("a long value is cut in the message") {
    const json doc = json{{"s", std::string(500, 'x')}};
    reader r(doc);
    bool b = false;
    r.boolean("s", b);
    const std::string m = r.finish().message();
    CHECK(m.size() < 80);
    CHECK(m.ends_with("xxx..."));
  }

  TEST_CASE("unknown keys come from the keys actually read") {
    const json doc = json::parse(R"({"a":{"b":1,"c":2},"d":true})");
    reader r(doc);
    std::uint32_t n = 0;
    bool d = false;
    r.integer("a.b", n);
    r.boolean("d", d);
    CHECK(r.finish().message() == "a.c: unknown key, expected one of b");

    reader all(doc);
    all.integer("a.b", n);
    all.integer("a.c", n);
    all.integer("a.e", n);  // asked for but absent: known, not unknown
    all.boolean("d", d);
    CHECK(all.finish().ok());

    reader top(doc);
    top.boolean("d", d);
    top.boolean("z", d);
    CHECK(top.finish().message() == "a: unknown key, expected one of d, z");

    reader lax(doc, {.unknown = unknown_keys::ignore});
    lax.boolean("d", d);
    CHECK(lax.finish().ok());
  }

  TEST_CASE("the first error is kept and later reads are no-ops") {
    const json doc = json::parse(R"({"a":0,"b":5,"c":"x","zz":1})");
    reader r(doc);
    std::uint32_t a = 9, b = 9;
    std::string c;
    CHECK_FALSE(r.integer("a", a, 1, 10));
    CHECK_FALSE(r.integer("b", b, 1, 10));  // valid, but an error came first
    CHECK_FALSE(r.string("c", c));
    r.fail_message("c", "later error");
    CHECK(a == 9);
    CHECK(b == 9);
    CHECK(c.empty());
    CHECK(r.finish().message() == "a: expected an integer in 1..10, got 0");
  }

  TEST_CASE("views: at(), member() with a literal key, keys() and array items") {
    const json doc = json::parse(
        R"({"tools":{"a.b":{"enabled":false}},"events":[{"seq":1},{"seq":"x"}],"swarm":{"k":1}})");
    reader r(doc, {.prefix = "cfg", .code = "bad_message"});
    for (auto name : r.keys("tools")) {
      auto t = r.at("tools").member(name);
      std::optional<bool> enabled;
      CHECK(t.boolean("enabled", enabled));
      CHECK(enabled == false);
    }
    json swarm;
    CHECK(r.any_object("swarm", swarm));  // taken whole: its keys are not checked
    const json* list = r.array("events");
    REQUIRE(list != nullptr);
    std::uint64_t seq = 0;
    CHECK(r.item("events", 0).integer(required("seq"), seq));
    CHECK(seq == 1);
    CHECK_FALSE(r.item("events", 1).integer(required("seq"), seq));
    const auto s = r.finish();
    CHECK(s.code() == "bad_message");
    CHECK(s.message() == R"(cfg.events[1].seq: expected a non-negative integer, got "x")");
  }

  TEST_CASE("an unknown key inside an array item is named with its index") {
    const json doc = json::parse(R"({"events":[{"seq":1,"bogus":2}]})");
    reader r(doc);
    std::uint64_t seq = 0;
    r.array("events");
    r.item("events", 0).integer("seq", seq);
    CHECK(r.finish().message() == "events[0].bogus: unknown key, expected one of seq");
  }

  TEST_CASE("null counts as absent only when asked to") {
    const json doc = json::parse(R"({"a":null})");
    std::uint32_t n = 3;
    reader lax(doc, {.null_is_absent = true});
    CHECK_FALSE(lax.integer("a", n));
    CHECK(lax.finish().ok());
    reader strict(doc);
    CHECK_FALSE(strict.integer("a", n));
    CHECK(strict.finish().message() == "a: expected an integer in 0..4294967295, got null");
    CHECK(n == 3);
  }

  TEST_CASE(
      "identifiers: invalid UTF-8 (repaired to U+FFFD on the way in) is refused with its code") {
    const json doc = json{{"worker", "w\xEF\xBF\xBD"}};
    reader r(doc, {.code = "bad_message", .identifier_code = "invalid_utf8"});
    std::string w;
    CHECK_FALSE(r.identifier("worker", w, 128));
    const auto s = r.finish();
    CHECK(s.code() == "invalid_utf8");
    CHECK(s.message().starts_with("worker: expected valid UTF-8"));
  }

  TEST_CASE("field_error words a cross-field check the same way") {
    const auto s =
        loopguard::json_fields::field_error("swarm.critical_at", "0 or 11..1024", json(5));
    CHECK(s.message() == "swarm.critical_at: expected 0 or 11..1024, got 5");
    CHECK(s.code().empty());
  }
}
