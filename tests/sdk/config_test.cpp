#include <doctest/doctest.h>

#include "loopguard/config.hpp"
#include "loopguard/presets.hpp"

using loopguard::manager_config;
using loopguard::parse_config;
using nlohmann::json;

namespace {
std::string config_error(const char* text) {
  const auto c = parse_config(json::parse(text));
  return c ? "" : c.error().message();
}
}  // namespace

TEST_SUITE("config") {
  TEST_CASE("an empty document is the balanced preset") {
    const auto parsed = parse_config(json::object());
    REQUIRE(parsed.has_value());
    const manager_config& c = *parsed;
    CHECK(c.preset == "balanced");
    CHECK(c.exact.steps.warn_at == 3);
    CHECK(c.exact.steps.critical_at == 6);
    CHECK(c.escalation.terminate_after == 3);
  }

  TEST_CASE("a preset plus overrides") {
    const auto parsed = parse_config(json::parse(R"({
      "preset": "aggressive",
      "detectors": {"exact": {"warn_at": 4, "critical_at": 9, "mode": "consecutive"},
                    "content": {"enabled": false}},
      "escalation": {"terminate_after": 0},
      "tools": {"poll_status": {"exact": {"warn_at": 20, "critical_at": 40}},
                "write_file": {"exact": {"warn_at": 2, "critical_at": 3}},
                "scratchpad": {"enabled": false}},
      "fingerprint": {"volatile_keys": ["nonce"]}
    })"));
    REQUIRE(parsed.has_value());
    const manager_config& c = *parsed;
    CHECK(c.preset == "aggressive");
    CHECK(c.exact.steps.warn_at == 4);
    CHECK(c.exact.mode == loopguard::count_mode::consecutive);
    CHECK_FALSE(c.content.enabled);
    CHECK(c.structural.steps.warn_at == 3);  // from the preset
    CHECK(c.escalation.terminate_after == 0);
    CHECK(c.tools.at("poll_status").exact->warn_at == 20);
    CHECK(c.tools.at("scratchpad").enabled == false);
    CHECK(c.fingerprint.volatile_keys == std::vector<std::string>{"nonce"});
  }

  TEST_CASE("a per-tool ladder follows the detector's own where keys are left out") {
    const auto parsed = parse_config(json::parse(R"({"tools":{"poll":{"exact":{"warn_at":8}},
                                                    "write":{"exact":{"critical_at":4}}}})"));
    REQUIRE(parsed.has_value());
    const manager_config& c = *parsed;
    CHECK(c.tools.at("poll").exact->warn_at == 8);
    CHECK(c.tools.at("poll").exact->critical_at == 11);
    CHECK(c.tools.at("write").exact->warn_at == 3);
    CHECK(c.tools.at("write").exact->critical_at == 4);
  }

  TEST_CASE("absolute_cap and reset_after_fire belong to the exact rule only") {
    CHECK(config_error(R"({"detectors":{"structural":{"absolute_cap":5}}})")
              .starts_with("detectors.structural.absolute_cap: unknown key, expected one of "
                           "critical_at, enabled, mode, terminate_at, warn_at, window"));
    CHECK(config_error(R"({"detectors":{"exact":{"absolute_cap":5,"reset_after_fire":true}}})") ==
          "");
  }

  TEST_CASE("terminate_at: 0 (never) or at least warn_at, on every ladder") {
    CHECK(config_error(R"({"detectors":{"exact":{"warn_at":3,"terminate_at":2}}})") ==
          "detectors.exact.terminate_at: expected 0 (never) or at least warn_at (3), got 2");
    const auto c = loopguard::parse_config(
        nlohmann::json::parse(R"({"detectors":{"summary":{"terminate_at":4}},
                                  "tools":{"bash":{"exact":{"terminate_at":9}}}})"));
    REQUIRE(c.has_value());
    CHECK(c->summary.steps.terminate_at == 4);
    CHECK(c->tools.at("bash").exact->terminate_at == 9);
  }
  TEST_CASE("the parity keys are read and written back") {
    const auto c = loopguard::parse_config(nlohmann::json::parse(R"({
        "detectors": {"exact": {"critical_needs_same_result": true},
                      "cycle": {"critical_needs_same_result": true},
                      "similar_args": {"identical_errors": true},
                      "result": {"errors": "unknown_tool"}},
        "escalation": {"user_message_restarts": false},
        "tools": {"process": {"poll": true}}})"));
    REQUIRE(c.has_value());
    CHECK(c->exact.critical_needs_same_result);
    CHECK(c->cycle.critical_needs_same_result);
    CHECK(c->similar_args.identical_errors);
    CHECK(c->result.count_errors == loopguard::result_rule::errors::unknown_tool);
    CHECK_FALSE(c->escalation.user_message_restarts);
    CHECK(*c->tools.at("process").poll);
    const auto back = loopguard::parse_config(loopguard::to_json(*c));
    REQUIRE(back.has_value());
    CHECK(loopguard::to_json(*back) == loopguard::to_json(*c));
    CHECK(config_error(R"({"detectors":{"result":{"errors":"some"}}})") ==
          R"(detectors.result.errors: expected one of any, unknown_tool, got "some")");
  }

  TEST_CASE("a default-constructed config is the balanced preset") {
    CHECK(loopguard::to_json(manager_config{}) ==
          loopguard::to_json(*loopguard::preset("balanced")));
  }

  TEST_CASE("errors name the key, what was expected and what came") {
    CHECK(config_error(R"({"detectors":{"exact":{"warn_at":0}}})") ==
          "detectors.exact.warn_at: expected an integer in 1..1000000, got 0");
    CHECK(config_error(R"({"detectors":{"exact":{"warn_at":"x"}}})") ==
          R"(detectors.exact.warn_at: expected an integer in 1..1000000, got "x")");
    CHECK(config_error(R"({"detectors":{"exact":{"warn_at":5,"critical_at":4}}})") ==
          "detectors.exact.critical_at: expected 0 (never) or at least warn_at (5), got 4");
    CHECK(config_error(R"({"detectors":{"similar_args":{"threshold":101}}})") ==
          "detectors.similar_args.threshold: expected a number in 0..100, got 101");
    CHECK(config_error(R"({"detectors":{"similar_args":{"result_threshold":-1}}})") ==
          "detectors.similar_args.result_threshold: expected a number in 0..100, got -1");
    CHECK(config_error(R"({"detectors":{"test_fix":{"alike_threshold":100.5}}})") ==
          "detectors.test_fix.alike_threshold: expected a number in 0..100, got 100.5");
    CHECK(config_error(R"({"detectors":{"bash_cascade":{"give_up_at":-2}}})") ==
          "detectors.bash_cascade.give_up_at: expected an integer in 0..1000000, got -2");
    CHECK(config_error(R"({"detectors":{"summary":{"give_up_at":5}}})")
              .starts_with("detectors.summary.give_up_at: unknown key"));
    CHECK(config_error(R"({"detectors":{"exact":{"mode":"sometimes"}}})") ==
          R"(detectors.exact.mode: expected one of consecutive, window, both, got "sometimes")");
    CHECK(config_error(R"({"detectors":{"exact":{"enabled":"yes"}}})") ==
          R"(detectors.exact.enabled: expected true or false, got "yes")");
    CHECK(config_error(R"({"detectors":{"exactt":{}}})") ==
          "detectors.exactt: unknown key, expected one of bash_cascade, content, cycle, exact, "
          "intent, judge, limit, output_similarity, result, retrace, similar_args, structural, "
          "summary, test_fix");
    CHECK(config_error(R"({"detectors":{"exact":{"warnat":3}}})")
              .starts_with("detectors.exact.warnat: unknown key, expected one of"));
    CHECK(config_error(R"({"preset":"nope"})").starts_with("preset: expected one of"));
    CHECK(config_error(R"({"tools":{"t":{"exact":{"warn_at":-1}}}})") ==
          "tools.t.exact.warn_at: expected an integer in 1..1000000, got -1");
    CHECK(config_error(R"({"tools":{"t":5}})") == "tools.t: expected an object, got 5");
    CHECK(config_error(R"({"tools":{"t":{"exactt":{}}}})")
              .starts_with("tools.t.exactt: unknown key, expected one of enabled, exact"));
    CHECK(config_error(R"({"detectors":{"cycle":{"min_length":4,"max_length":3}}})") ==
          "detectors.cycle.max_length: expected at least min_length (4), got 3");
    CHECK(config_error(R"({"detectors":{"content":{"chunk_size":100,"max_history":100}}})") ==
          "detectors.content.max_history: expected at least twice chunk_size (200), got 100");
    CHECK(config_error(R"([1])") == "configuration: expected an object, got [1]");
    CHECK(config_error(R"({"detectors":{"exact":{"warn_at":2.5}}})") ==
          "detectors.exact.warn_at: expected an integer in 1..1000000, got 2.5");
    CHECK(config_error(R"({"fingerprint":{"primary_keys":"path"}})") ==
          R"(fingerprint.primary_keys: expected an array of strings, got "path")");
    CHECK(config_error(R"({"swarm":5})") == "swarm: expected an object, got 5");
  }

  TEST_CASE("10.0 is an integer, as in every reader (json_fields.hpp)") {
    const auto c = parse_config(json::parse(R"({"detectors":{"exact":{"warn_at":4.0}}})"));
    REQUIRE(c.has_value());
    CHECK(c->exact.steps.warn_at == 4);
  }

  TEST_CASE("only the first error is reported") {
    CHECK(
        config_error(R"({"detectors":{"exact":{"warn_at":0,"bogus":1},"cycle":{"enabled":3}}})") ==
        "detectors.exact.warn_at: expected an integer in 1..1000000, got 0");
  }

  TEST_CASE("every preset round-trips through JSON") {
    for (auto name : loopguard::preset_names()) {
      CAPTURE(name);
      const auto p = loopguard::preset(name);
      REQUIRE(p.has_value());
      const json doc = loopguard::to_json(*p);
      const auto back = parse_config(doc);
      REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message()));
      CHECK(loopguard::to_json(*back) == doc);
    }
    CHECK_FALSE(loopguard::preset("unknown").has_value());
  }
}
