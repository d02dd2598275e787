#include <doctest/doctest.h>

#include "loopguard/config.hpp"
#include "loopguard/presets.hpp"

using loopguard::manager_config;
using loopguard::parse_config;
using nlohmann::json;

namespace {
std::string error_of(const char* text) {
  manager_config c;
  auto err = parse_config(json::parse(text), c);
  return err ? *err : "";
}
}  // namespace

TEST_SUITE("config") {
  TEST_CASE("an empty document is the balanced preset") {
    manager_config c;
    REQUIRE_FALSE(parse_config(json::object(), c).has_value());
    CHECK(c.preset == "balanced");
    CHECK(c.exact.steps.warn_at == 3);
    CHECK(c.exact.steps.critical_at == 6);
    CHECK(c.escalation.terminate_after == 3);
  }

  TEST_CASE("a preset plus overrides") {
    manager_config c;
    REQUIRE_FALSE(parse_config(json::parse(R"({
      "preset": "aggressive",
      "detectors": {"exact": {"warn_at": 4, "critical_at": 9, "mode": "consecutive"},
                    "content": {"enabled": false}},
      "escalation": {"terminate_after": 0},
      "tools": {"poll_status": {"exact": {"warn_at": 20, "critical_at": 40}},
                "write_file": {"exact": {"warn_at": 2, "critical_at": 3}},
                "scratchpad": {"enabled": false}},
      "fingerprint": {"volatile_keys": ["nonce"]}
    })"),
                               c)
                      .has_value());
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
    manager_config c;
    REQUIRE_FALSE(parse_config(json::parse(R"({"tools":{"poll":{"exact":{"warn_at":8}},
                                                         "write":{"exact":{"critical_at":4}}}})"),
                               c)
                      .has_value());
    CHECK(c.tools.at("poll").exact->warn_at == 8);
    CHECK(c.tools.at("poll").exact->critical_at == 11);
    CHECK(c.tools.at("write").exact->warn_at == 3);
    CHECK(c.tools.at("write").exact->critical_at == 4);
  }

  TEST_CASE("absolute_cap and reset_after_fire belong to the exact rule only") {
    CHECK(error_of(R"({"detectors":{"structural":{"absolute_cap":5}}})")
              .starts_with("detectors.structural.absolute_cap: unknown key"));
    CHECK(error_of(R"({"detectors":{"exact":{"absolute_cap":5,"reset_after_fire":true}}})") == "");
  }

  TEST_CASE("a default-constructed config is the balanced preset") {
    CHECK(loopguard::to_json(manager_config{}) ==
          loopguard::to_json(*loopguard::preset("balanced")));
  }

  TEST_CASE("errors name the key and the allowed range") {
    CHECK(error_of(R"({"detectors":{"exact":{"warn_at":0}}})") ==
          "detectors.exact.warn_at: must be an integer from 1 to 1000000, got 0");
    CHECK(error_of(R"({"detectors":{"exact":{"warn_at":5,"critical_at":4}}})")
              .starts_with("detectors.exact.critical_at: must be 0 (never) or at least warn_at"));
    CHECK(error_of(R"({"detectors":{"similar_args":{"threshold":101}}})") ==
          "detectors.similar_args.threshold: must be a number from 0 to 100, got 101");
    CHECK(error_of(R"({"detectors":{"exact":{"mode":"sometimes"}}})") ==
          "detectors.exact.mode: must be one of both, consecutive, window, got \"sometimes\"");
    CHECK(error_of(R"({"detectors":{"exact":{"enabled":"yes"}}})") ==
          "detectors.exact.enabled: must be true or false, got \"yes\"");
    CHECK(error_of(R"({"detectors":{"exactt":{}}})").starts_with("detectors.exactt: unknown key"));
    CHECK(error_of(R"({"detectors":{"exact":{"warnat":3}}})")
              .starts_with("detectors.exact.warnat: unknown key"));
    CHECK(error_of(R"({"preset":"nope"})").starts_with("preset: must be one of"));
    CHECK(error_of(R"({"tools":{"t":{"exact":{"warn_at":-1}}}})")
              .starts_with("tools.t.exact.warn_at: must be an integer"));
    CHECK(error_of(R"({"detectors":{"cycle":{"min_length":4,"max_length":3}}})")
              .starts_with("detectors.cycle.max_length"));
    CHECK(error_of(R"([1])").starts_with("configuration: must be a JSON object"));
    CHECK(error_of(R"({"detectors":{"exact":{"warn_at":2.5}}})")
              .starts_with("detectors.exact.warn_at: must be an integer"));
    CHECK(error_of(R"({"fingerprint":{"primary_keys":"path"}})")
              .starts_with("fingerprint.primary_keys: must be an array of strings"));
  }

  TEST_CASE("a failed parse leaves the output untouched") {
    manager_config c;
    c.exact.steps.warn_at = 77;
    CHECK(parse_config(json::parse(R"({"detectors":{"exact":{"warn_at":0}}})"), c).has_value());
    CHECK(c.exact.steps.warn_at == 77);
  }

  TEST_CASE("every preset round-trips through JSON") {
    for (auto name : loopguard::preset_names()) {
      CAPTURE(name);
      const auto p = loopguard::preset(name);
      REQUIRE(p.has_value());
      const json doc = loopguard::to_json(*p);
      manager_config back;
      const auto err = parse_config(doc, back);
      REQUIRE_MESSAGE(!err.has_value(), (err ? *err : ""));
      CHECK(loopguard::to_json(back) == doc);
    }
    CHECK_FALSE(loopguard::preset("unknown").has_value());
  }
}
