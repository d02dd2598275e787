#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "loopguard/protocol.hpp"
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
}
