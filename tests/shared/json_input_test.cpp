// json_input::parse with keys::unique (duplicate keys refused at any depth) and the protocol
// frames and config files that use it.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <string>

#include "loopguard/json_input.hpp"
#include "loopguard/protocol.hpp"

namespace json_input = loopguard::json_input;
using json_input::keys;

namespace {

std::string refusal(std::string_view text) {
  const auto doc = json_input::parse(text, keys::unique);
  REQUIRE_FALSE(doc.has_value());
  CHECK(doc.error().code() == json_input::kDuplicateKey);
  return doc.error().message();
}

}  // namespace

TEST_SUITE("json_input duplicate keys") {
  TEST_CASE("a repeated key is refused at any depth, naming the key") {
    CHECK(refusal(R"({"type":"events","type":"hello"})") == R"(duplicate key "type")");
    CHECK(refusal(R"({"a":{"b":[1,{"c":1,"d":2,"c":3}]}})") == R"(duplicate key "c")");
    CHECK(refusal(R"([[{"x":null,"x":null}]])") == R"(duplicate key "x")");
    // Escapes are decoded first: the same key spelled twice ways is the same key.
    CHECK(refusal(R"({"type":1,"t\u0079pe":2})") == R"(duplicate key "type")");
    // Invalid UTF-8 is repaired first: both keys become U+FFFD.
    CHECK(refusal("{\"\xff\":1,\"\xfe\":2}") == "duplicate key \"\xef\xbf\xbd\"");
    // A control character is shown escaped, a long key cut.
    CHECK(refusal(R"({"a\u0001":1,"a\u0001":2})") == R"(duplicate key "a\u0001")");
    const std::string long_key(300, 'k');
    CHECK(refusal("{\"" + long_key + "\":1,\"" + long_key + "\":2}") ==
          "duplicate key \"" + std::string(64, 'k') + "\" (the first 64 of 300 bytes)");
  }

  TEST_CASE("the default keeps the last value, as nlohmann does") {
    const auto doc = json_input::parse(R"({"type":"events","type":"hello"})");
    REQUIRE(doc.has_value());
    CHECK(doc->value == nlohmann::json{{"type", "hello"}});
  }

  TEST_CASE("without duplicates both ways build the same document") {
    const char* texts[] = {
        R"({})",
        R"([])",
        R"(0)",
        R"("s")",
        R"(null)",
        R"({"a":1,"b":-2,"c":1.5,"d":18446744073709551615,"e":true,"f":false,"g":null})",
        R"({"a":{"a":{"a":[1,[2,[3,{"a":"x"}]]]}},"b":[{},[],{"c":[]}]})",
        R"([{"k":1},{"k":2},{"k":3}])",
        "\xef\xbb\xbf{\"bom\":\"caf\xc3\xa9\",\"e\":\"\\ud83d\\ude00\",\"bad\":\"\xff\"}",
        R"({"type":"events","events":[{"seq":1,"tool":"t","summary":"s","exact":"00000000000000ff",
           "structural":"0000000000000001","ok":true,"t":1.25}]})",
    };
    for (const char* text : texts) {
      CAPTURE(text);
      const auto last = json_input::parse(text);
      const auto unique = json_input::parse(text, keys::unique);
      REQUIRE(last.has_value());
      REQUIRE(unique.has_value());
      CHECK(unique->value == last->value);
      CHECK(unique->repairs == last->repairs);
    }
  }

  TEST_CASE("other errors read the same both ways") {
    const char* texts[] = {R"({"a":1,})", R"([1e400])", R"({"a":1} x)", "", R"({"a")", "[1,2"};
    for (const char* text : texts) {
      CAPTURE(text);
      const auto last = json_input::parse(text);
      const auto unique = json_input::parse(text, keys::unique);
      REQUIRE_FALSE(last.has_value());
      REQUIRE_FALSE(unique.has_value());
      CHECK(unique.error() == last.error());
    }
  }

  TEST_CASE("a protocol frame with a repeated key is bad_message naming it") {
    const auto frame = loopguard::protocol::parse(
        R"({"type":"events","type":"hello","version":1,"swarm":"s","worker":"w","incarnation":"i"})");
    REQUIRE_FALSE(frame.has_value());
    CHECK(frame.error().code() == loopguard::protocol::codes::bad_message);
    CHECK(frame.error().message() == R"(duplicate key "type")");
    const auto nested = loopguard::protocol::parse(
        R"({"type":"events","events":[{"seq":1,"seq":2,"tool":"t","summary":"s",)"
        R"("exact":"00000000000000ff","structural":"0000000000000001","t":1}]})");
    REQUIRE_FALSE(nested.has_value());
    CHECK(nested.error().code() == loopguard::protocol::codes::bad_message);
    CHECK(nested.error().message() == R"(duplicate key "seq")");
    // Not JSON at all stays bad_json.
    CHECK(loopguard::protocol::parse(R"({"type":)").error().code() ==
          loopguard::protocol::codes::bad_json);
  }

  TEST_CASE("a config file with a repeated key is refused with the file's name") {
    char path[] = "/tmp/lg-json-input-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    {
      std::ofstream out(path);
      out << "{\"swarm\": {\"threshold\": 10,\n \"threshold\": 1}}\n";
    }
    const auto doc = json_input::parse_file(path);
    std::remove(path);
    REQUIRE_FALSE(doc.has_value());
    CHECK(doc.error().message() == std::string(path) + R"(: duplicate key "threshold")");
  }
}
