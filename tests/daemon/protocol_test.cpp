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
    for (const std::string name : {"hello", "welcome", "events", "ack", "gap", "verdict",
                                   "swarm_complete", "error", "detection"}) {
      CAPTURE(name);
      const auto text = golden(name);
      const auto m = parse(text);
      REQUIRE_MESSAGE(m.has_value(), (m ? "" : m.error().message()));
      CHECK(type_name(*m) == name);
      CHECK(nlohmann::json::parse(serialize(*m)) == nlohmann::json::parse(text));
    }
  }

  TEST_CASE("costs (feature cost): golden events and verdict round-trip, in JSON and LGB2") {
    const auto batch = parse(golden("events_cost"));
    REQUIRE_MESSAGE(batch.has_value(), (batch ? "" : batch.error().message()));
    const auto& items = std::get<events>(*batch).items;
    REQUIRE(items.size() == 2);
    CHECK(items[0].spent == cost{15200, 0.23});
    CHECK_FALSE(items[0].charge);
    CHECK(items[1].spent == cost{800, 0.01});
    CHECK(items[1].charge);
    CHECK(nlohmann::json::parse(serialize(*batch)) == nlohmann::json::parse(golden("events_cost")));
    CHECK(uses_cost(std::get<events>(*batch)));
    const std::string bytes = encode_binary(std::get<events>(*batch));
    CHECK(bytes.substr(0, 4) == "LGB2");
    const auto back = decode_binary(bytes);
    REQUIRE(back.has_value());
    CHECK(back->items == items);
    // A batch without costs stays LGB1, which every daemon reads.
    events plain;
    plain.items.push_back(test::wire_event(1, 1, 1));
    CHECK_FALSE(uses_cost(plain));
    CHECK(encode_binary(plain).substr(0, 4) == "LGB1");
    CHECK(decode_binary(encode_binary(plain))->items == plain.items);

    const auto v = parse(golden("verdict_cost"));
    REQUIRE(v.has_value());
    CHECK(std::get<verdict>(*v).spent == cost{212400, 3.18});
    CHECK(std::get<verdict>(*v).unit == "USD");
    CHECK(nlohmann::json::parse(serialize(*v)) == nlohmann::json::parse(golden("verdict_cost")));
    // Without costs a verdict has neither field, as in v1.
    const auto old = nlohmann::json::parse(serialize(*parse(golden("verdict"))));
    CHECK_FALSE(old.contains("cost"));
    CHECK_FALSE(old.contains("unit"));
  }

  TEST_CASE("a verdict's summed cost past one event's limit is written saturated, and parses") {
    // Found by the fuzzer: many charges summed into a wasted cost above 1e12 tokens made a
    // verdict frame that our own parser refused.
    protocol::verdict v;
    v.swarm = "s";
    v.tool = "delegate";
    v.kind = "exact";
    v.fingerprint = 0x77;
    v.level = loopguard::severity::warn;
    v.message = "m";
    v.spent = {protocol::kMaxEventTokens * 2, protocol::kMaxEventAmount * 3};
    const auto back = protocol::parse(protocol::serialize(protocol::message{v}));
    REQUIRE(back.has_value());
    const auto* pv = std::get_if<protocol::verdict>(&*back);
    REQUIRE(pv != nullptr);
    CHECK(pv->spent.tokens == protocol::kMaxEventTokens);
    CHECK(pv->spent.amount == protocol::kMaxEventAmount);
  }

  TEST_CASE("a hand-off's peer (feature handoff): JSON and LGB2, a bad one refuses the event") {
    const auto ok = parse(R"({"type":"events","events":[{"seq":7,"tool":"delegate",)"
                          R"("exact":"0000000000000001","structural":"0000000000000002","t":1,)"
                          R"("peer":"reviewer-2"}]})");
    REQUIRE(ok.has_value());
    const auto& e = std::get<events>(*ok).items.at(0);
    CHECK(e.peer == "reviewer-2");
    CHECK(nlohmann::json::parse(serialize(*ok))["events"][0]["peer"] == "reviewer-2");
    CHECK(uses_handoff(std::get<events>(*ok)));
    CHECK_FALSE(uses_cost(std::get<events>(*ok)));
    const std::string bytes = encode_binary(std::get<events>(*ok));
    CHECK(bytes.substr(0, 4) == "LGB2");
    CHECK(decode_binary(bytes)->items.at(0).peer == "reviewer-2");

    const auto bad = parse(R"({"type":"events","events":[{"seq":7,"tool":"delegate",)"
                           R"("exact":"0000000000000001","structural":"0000000000000002","t":1,)"
                           R"("peer":"\udcff"}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == "bad_message");
    CHECK(bad.error().message() ==
          "events[0].peer: expected a worker name (valid UTF-8 without U+FFFD)");
    events b = std::get<events>(*ok);
    b.items[0].peer = "\xff";
    const auto refused = decode_binary(encode_binary(b));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == "bad_message");
    CHECK(failed_event_seq(encode_binary(b), true, refused.error()) == 7u);
  }

  TEST_CASE("costs out of range are refused, naming the field or the event") {
    const auto event_with = [](const std::string& cost_json) {
      return parse(R"({"type":"events","events":[{"seq":1,"tool":"t","exact":"0000000000000001",)"
                   R"("structural":"0000000000000002","t":1,"cost":)" +
                   cost_json + "}]}");
    };
    CHECK(event_with(R"({"tokens":-1})").error().message() ==
          "events[0].cost.tokens: expected an integer in 0..1000000000000, got -1");
    CHECK(event_with(R"({"amount":-0.5})").error().message().starts_with("events[0].cost.amount:"));
    CHECK(event_with(R"({"tokens":1e13})").error().message().starts_with("events[0].cost.tokens:"));
    CHECK(event_with(R"("lots")").error().message() ==
          "events[0].cost: expected an object, got \"lots\"");
    CHECK(event_with("null").has_value());  // null is absent
    CHECK(event_with("{}").has_value());

    events b;
    b.items.push_back(test::wire_event(1, 1, 1));
    b.items.push_back(test::wire_event(2, 1, 2));
    for (double amount : {-1.0, std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(), 1e13}) {
      CAPTURE(amount);
      b.items[1].spent = {1, amount};
      const std::string bytes = encode_binary(b);
      const auto e = decode_binary(bytes);
      REQUIRE_FALSE(e.has_value());
      CHECK(e.error().message().starts_with("binary batch: event 1: cost must be"));
      CHECK(failed_event_seq(bytes, true, e.error()) == 2u);
    }
    b.items[1].spent = {kMaxEventTokens + 1, 0};
    CHECK_FALSE(decode_binary(encode_binary(b)).has_value());
    // Truncated inside the cost of the last event.
    b.items[1].spent = {5, 0.5};
    const std::string bytes = encode_binary(b);
    CHECK_FALSE(decode_binary(bytes.substr(0, bytes.size() - 3)).has_value());
  }

  TEST_CASE("features, an error's seq and a lifted verdict round-trip, no features is v1") {
    const auto w = parse(golden("welcome"));
    REQUIRE(w.has_value());
    const auto& welcome_msg = std::get<welcome>(*w);
    CHECK(welcome_msg.has(features::detections));
    CHECK(welcome_msg.has(features::active_verdicts));
    CHECK_FALSE(welcome_msg.has("teleport"));
    const auto v1 = parse(R"({"type":"welcome","version":1,"last_ack":0})");
    REQUIRE(v1.has_value());
    CHECK(std::get<welcome>(*v1).features.empty());
    CHECK_FALSE(std::get<welcome>(*v1).has(features::detections));

    const auto e = parse(R"({"type":"error","code":"bad_message","message":"m","seq":7})");
    REQUIRE(e.has_value());
    CHECK(std::get<error>(*e).seq == 7u);
    CHECK(serialize(*e).find(R"("seq":7)") != std::string::npos);
    const auto no_seq = parse(golden("error"));
    REQUIRE(no_seq.has_value());
    CHECK_FALSE(std::get<error>(*no_seq).seq.has_value());

    auto lifted = nlohmann::json::parse(golden("verdict"));
    lifted["level"] = "none";
    const auto v = parse(lifted.dump());
    REQUIRE(v.has_value());
    CHECK(std::get<verdict>(*v).level == severity::none);
    CHECK(nlohmann::json::parse(serialize(*v))["level"] == "none");
  }

  TEST_CASE("a hello's mode: observe is read and written back, absent or another value enforce") {
    CHECK_FALSE(std::get<hello>(*parse(golden("hello"))).observing);
    const std::string text = golden("hello_observe");
    const auto observing = parse(text);
    REQUIRE(observing.has_value());
    CHECK(std::get<hello>(*observing).observing);
    CHECK(nlohmann::json::parse(serialize(*observing)) == nlohmann::json::parse(text));
    auto h = nlohmann::json::parse(text);
    h["mode"] = "enforce";
    CHECK_FALSE(std::get<hello>(*parse(h.dump())).observing);
    h["mode"] = "canary";  // a mode of a later version: this daemon does not know it
    CHECK_FALSE(std::get<hello>(*parse(h.dump())).observing);
    h["mode"] = 1;
    const auto mistyped = parse(h.dump());
    REQUIRE_FALSE(mistyped.has_value());
    CHECK(mistyped.error().code() == codes::bad_message);
    CHECK(mistyped.error().message() == "mode: expected a string of at most 128 bytes, got 1");
  }

  TEST_CASE("a detection's level is warn, critical or terminate, its detector an identifier") {
    auto d = nlohmann::json::parse(golden("detection"));
    d["level"] = "none";
    const auto none = parse(d.dump());
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code() == codes::bad_message);
    CHECK(none.error().message().rfind("level: expected one of warn, critical, terminate", 0) == 0);
    d["level"] = "warn";
    std::string text = d.dump();
    text.replace(text.find(R"("exact")"), 7, R"("ex\ud800act")");
    const auto bad = parse(text);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == codes::invalid_utf8);
  }

  TEST_CASE("event fields are read exactly") {
    const auto m = parse(golden("events"));
    REQUIRE(m.has_value());
    const auto& b = std::get<events>(*m);
    REQUIRE(b.items.size() == 2);
    CHECK(b.items[0].seq == 42);
    CHECK(b.items[0].exact == 0x9a3c55e0d1b27f48ULL);
    CHECK_FALSE(b.items[0].ok);
    CHECK(b.items[0].result == 0x51d0e2c4a8b39f77ULL);
    CHECK(b.items[1].result == std::nullopt);
    CHECK(b.items[1].t == 1714.0);
  }

  TEST_CASE("errors name the field, what was expected and what came") {
    const auto error_of = [](std::string_view text) {
      const auto m = parse(text);
      REQUIRE_FALSE(m.has_value());
      return m.error();
    };
    CHECK(error_of("not json").code() == "bad_json");
    auto e = error_of(R"({"type":"hello","version":1,"swarm":"s","worker":"w"})");
    CHECK(e.code() == "bad_message");
    CHECK(e.message() == "incarnation: expected a string of at most 128 bytes, got nothing");
    e = error_of(
        R"({"type":"events","events":[{"seq":1,"tool":"x","exact":"zz","structural":"0000000000000000","t":0}]})");
    CHECK(e.code() == "bad_message");
    CHECK(e.message() == R"(events[0].exact: expected 16 hex digits, got "zz")");
    e = error_of(R"({"type":"nope"})");
    CHECK(e.message() ==
          R"(type: expected one of hello, welcome, events, ack, gap, verdict, swarm_complete, )"
          R"(error, detection, got "nope")");
    e = error_of(R"({"type":"hello","version":1,"swarm":"","worker":"w","incarnation":"i"})");
    CHECK(e.message() == R"(swarm: expected a non-empty string, got "")");
    e = error_of(R"({"type":"ack","seq":-1})");
    CHECK(e.message() == "seq: expected a non-negative integer, got -1");
    e = error_of(R"([1])");
    CHECK(e.code() == "bad_message");
    CHECK(e.message() == "message: expected an object, got [1]");
    e = error_of(R"({"type":"events","events":[5]})");
    CHECK(e.message() == "events[0]: expected an object, got 5");
  }

  TEST_CASE("10.0 is an integer and null is absent, as json_fields reads them") {
    const auto m = parse(R"({"type":"ack","seq":10.0})");
    REQUIRE(m.has_value());
    CHECK(std::get<ack>(*m).seq == 10);
    const auto h = parse(
        R"({"type":"hello","version":1,"swarm":"s","worker":"w","incarnation":"i","token":null})");
    REQUIRE(h.has_value());
    CHECK(std::get<hello>(*h).token.empty());
    CHECK_FALSE(parse(R"({"type":"ack","seq":10.5})").has_value());
  }

  TEST_CASE("a batch over the limit is refused with batch_too_large") {
    events big;
    for (std::size_t i = 0; i <= kMaxBatchEvents; ++i)
      big.items.push_back(test::wire_event(i + 1, 1, 0));
    const auto m = parse(serialize(big));
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code() == "batch_too_large");
    const auto b = decode_binary(encode_binary(big));
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error().code() == "batch_too_large");
  }

  TEST_CASE("binary batches round-trip and reject truncation") {
    const auto m = parse(golden("events"));
    REQUIRE(m.has_value());
    const auto& b = std::get<events>(*m);
    const std::string bytes = encode_binary(b);
    const auto out = decode_binary(bytes);
    REQUIRE(out.has_value());
    CHECK(out->items == b.items);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      CAPTURE(cut);
      CHECK_FALSE(decode_binary(std::string_view(bytes).substr(0, cut)).has_value());
    }
    CHECK_FALSE(decode_binary(bytes + "x").has_value());
  }

  TEST_CASE("identifiers that are not valid UTF-8 are refused with invalid_utf8 naming the field") {
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
      const auto m = parse(text);
      REQUIRE_FALSE(m.has_value());
      CHECK(m.error().code() == "invalid_utf8");
      CHECK(m.error().message().starts_with(field + ": expected valid UTF-8"));
    }
  }

  TEST_CASE("content is repaired, never refused: a lone surrogate in a tool name becomes U+FFFD") {
    const auto m =
        parse(R"({"type":"events","events":[{"seq":1,"tool":"t\udcff","summary":"\ud800",)"
              R"("exact":"0000000000000001","structural":"0000000000000002","t":1}]})");
    REQUIRE(m.has_value());
    const auto& e = std::get<events>(*m).items.at(0);
    CHECK(e.tool == "t\xEF\xBF\xBD");
    CHECK(e.summary == "\xEF\xBF\xBD");
  }

  TEST_CASE("numbers beyond a double's range and deep nesting are bad_json, never a throw") {
    auto m = parse(R"({"type":"ack","seq":1e400})");
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code() == "bad_json");
    m = parse(std::string(30000, '[') + std::string(30000, ']'));
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code() == "bad_json");
    CHECK(m.error().message().find("nested") != std::string::npos);
  }

  TEST_CASE(
      "regression: binary batches repair tool and summary and refuse times that are not finite") {
    events b;
    b.items.push_back(test::wire_event(1, 1, 1));
    b.items[0].tool = "\xff\xfe";
    b.items[0].summary = std::string(kMaxSummaryBytes, '\xff');  // grows threefold when repaired
    const auto out = decode_binary(encode_binary(b));
    REQUIRE(out.has_value());
    CHECK(out->items[0].tool == "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(out->items[0].summary.size() <= kMaxSummaryBytes);
    CHECK(utf8::is_valid(out->items[0].summary));
    CHECK(utf8::is_valid(serialize(message(*out))));
    for (double t :
         {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity()}) {
      b.items[0].t = t;
      const auto e = decode_binary(encode_binary(b));
      REQUIRE_FALSE(e.has_value());
      CHECK(e.error().code() == "bad_message");
      CHECK(e.error().message().find("finite") != std::string::npos);
    }
  }
}
