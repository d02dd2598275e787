#include <doctest/doctest.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::protocol;

namespace {
std::string golden(const std::string& name) {
  std::ifstream in(std::string(LOOPGUARD_DAEMON_TEST_DIR) + "/protocol/" + name + ".json");
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string s = buf.str();
  REQUIRE_MESSAGE(!s.empty(), name);
  return s;
}
}  // namespace

TEST_SUITE("protocol") {
  TEST_CASE("every golden message parses to its type and serializes back to the same JSON") {
    for (const std::string name :
         {"hello", "welcome", "events", "ack", "gap", "verdict", "swarm_complete", "error"}) {
      CAPTURE(name);
      const auto text = golden(name);
      message m;
      const auto err = parse(text, m);
      REQUIRE_MESSAGE(!err, (err ? err->message : ""));
      CHECK(type_name(m) == name);
      CHECK(nlohmann::json::parse(serialize(m)) == nlohmann::json::parse(text));
    }
  }

  TEST_CASE("event fields are read exactly") {
    message m;
    REQUIRE_FALSE(parse(golden("events"), m));
    const auto& b = std::get<events>(m);
    REQUIRE(b.items.size() == 2);
    CHECK(b.items[0].seq == 42);
    CHECK(b.items[0].exact == 0x9a3c55e0d1b27f48ULL);
    CHECK_FALSE(b.items[0].ok);
    CHECK(b.items[0].result == 0x51d0e2c4a8b39f77ULL);
    CHECK(b.items[1].result == std::nullopt);
    CHECK(b.items[1].t == 1714.0);
  }

  TEST_CASE("errors name the field") {
    message m;
    auto e = parse("not json", m);
    REQUIRE(e);
    CHECK(e->code == "bad_json");
    e = parse(R"({"type":"hello","version":1,"swarm":"s","worker":"w"})", m);
    REQUIRE(e);
    CHECK(e->code == "bad_message");
    CHECK(e->message == "incarnation is missing");
    e = parse(
        R"({"type":"events","events":[{"seq":1,"tool":"x","exact":"zz","structural":"0000000000000000","t":0}]})",
        m);
    REQUIRE(e);
    CHECK(e->message == "events[0].exact must be 16 hex digits");
    e = parse(R"({"type":"nope"})", m);
    REQUIRE(e);
    CHECK(e->message.find("unknown type") != std::string::npos);
    e = parse(R"({"type":"hello","version":1,"swarm":"","worker":"w","incarnation":"i"})", m);
    REQUIRE(e);
    CHECK(e->message == "swarm must not be empty");
  }

  TEST_CASE("a batch over the limit is refused with batch_too_large") {
    events big;
    for (std::size_t i = 0; i <= kMaxBatchEvents; ++i)
      big.items.push_back(test::wire_event(i + 1, 1, 0));
    message m;
    auto e = parse(serialize(big), m);
    REQUIRE(e);
    CHECK(e->code == "batch_too_large");
    events out;
    e = decode_binary(encode_binary(big), out);
    REQUIRE(e);
    CHECK(e->code == "batch_too_large");
  }

  TEST_CASE("binary batches round-trip and reject truncation") {
    message m;
    REQUIRE_FALSE(parse(golden("events"), m));
    const auto& b = std::get<events>(m);
    const std::string bytes = encode_binary(b);
    events out;
    REQUIRE_FALSE(decode_binary(bytes, out));
    CHECK(out.items == b.items);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      CAPTURE(cut);
      CHECK(decode_binary(std::string_view(bytes).substr(0, cut), out).has_value());
    }
    CHECK(decode_binary(bytes + "x", out).has_value());
  }

  TEST_CASE("identifiers that are not valid UTF-8 are refused with invalid_utf8 naming the field") {
    message m;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"type":"hello","version":1,"swarm":"s\udcff","worker":"w","incarnation":"i"})",
         "swarm"},
        {"{\"type\":\"hello\",\"version\":1,\"swarm\":\"s\",\"worker\":\"w\xff\",\"incarnation\":"
         "\"i\"}",
         "worker"},
        {R"({"type":"hello","version":1,"swarm":"s","worker":"w","incarnation":"\ud800x"})",
         "incarnation"},
        {R"({"type":"swarm_complete","swarm":"\udfff"})", "swarm"},
        {R"({"type":"ack\udcff","seq":1})", "type"},
    };
    for (const auto& [text, field] : cases) {
      CAPTURE(text);
      const auto e = parse(text, m);
      REQUIRE(e);
      CHECK(e->code == "invalid_utf8");
      CHECK(e->message.starts_with(field));
    }
  }

  TEST_CASE("content is repaired, never refused: a lone surrogate in a tool name becomes U+FFFD") {
    message m;
    REQUIRE_FALSE(
        parse(R"({"type":"events","events":[{"seq":1,"tool":"t\udcff","summary":"\ud800",)"
              R"("exact":"0000000000000001","structural":"0000000000000002","t":1}]})",
              m));
    const auto& e = std::get<events>(m).items.at(0);
    CHECK(e.tool == "t\xEF\xBF\xBD");
    CHECK(e.summary == "\xEF\xBF\xBD");
  }

  TEST_CASE("numbers beyond a double's range and deep nesting are bad_json, never a throw") {
    message m;
    auto e = parse(R"({"type":"ack","seq":1e400})", m);
    REQUIRE(e);
    CHECK(e->code == "bad_json");
    e = parse(std::string(30000, '[') + std::string(30000, ']'), m);
    REQUIRE(e);
    CHECK(e->code == "bad_json");
    CHECK(e->message.find("nested") != std::string::npos);
  }

  TEST_CASE(
      "regression: binary batches repair tool and summary and refuse times that are not finite") {
    events b;
    b.items.push_back(test::wire_event(1, 1, 1));
    b.items[0].tool = "\xff\xfe";
    b.items[0].summary = std::string(kMaxSummaryBytes, '\xff');  // grows threefold when repaired
    events out;
    REQUIRE_FALSE(decode_binary(encode_binary(b), out));
    CHECK(out.items[0].tool == "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(out.items[0].summary.size() <= kMaxSummaryBytes);
    CHECK(utf8::is_valid(out.items[0].summary));
    CHECK(utf8::is_valid(serialize(message(out))));
    for (double t :
         {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity()}) {
      b.items[0].t = t;
      const auto e = decode_binary(encode_binary(b), out);
      REQUIRE(e);
      CHECK(e->code == "bad_message");
      CHECK(e->message.find("finite") != std::string::npos);
    }
  }
}
