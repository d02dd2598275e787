#include <doctest/doctest.h>

#include "state/swarm_rules.hpp"

using namespace loopguard::daemon;
using nlohmann::json;

TEST_SUITE("swarm_rules") {
  TEST_CASE("defaults are the documented ones and valid") {
    const swarm_rules r;
    CHECK(r.threshold == 10);
    CHECK(r.min_workers == 2);
    CHECK(r.window_seconds == 1800);
    CHECK(r.progress_aware);
    CHECK(r.absolute_cap == 50);
    CHECK(r.critical_at == 20);
    CHECK(validate(r).ok());
  }

  TEST_CASE("a partial object overrides only its keys and round-trips") {
    const auto r = parse_swarm_rules(json{{"min_workers", 1}, {"progress_aware", false}});
    REQUIRE(r.has_value());
    CHECK(r->min_workers == 1);
    CHECK_FALSE(r->progress_aware);
    CHECK(r->threshold == 10);
    const auto back = parse_swarm_rules(to_json(*r));
    REQUIRE(back.has_value());
    CHECK(to_json(*back) == to_json(*r));
  }

  TEST_CASE("keys not given keep the base's value") {
    swarm_rules base;
    base.threshold = 3;
    const auto r = parse_swarm_rules(json{{"min_workers", 1}}, base);
    REQUIRE(r.has_value());
    CHECK(r->threshold == 3);
  }

  TEST_CASE("errors name the key, what was expected and what came") {
    const auto error_of = [](const json& j) {
      const auto r = parse_swarm_rules(j);
      REQUIRE_FALSE(r.has_value());
      return r.error().message();
    };
    CHECK(error_of(json{{"threshold", 0}}) ==
          "swarm.threshold: expected an integer in 1..1024, got 0");
    CHECK(error_of(json{{"window_seconds", "long"}}) ==
          R"(swarm.window_seconds: expected a number in 0..2592000, got "long")");
    CHECK(error_of(json{{"window_seconds", 0}}) ==
          "swarm.window_seconds: expected a number in (0, 2592000], got 0.0");
    CHECK(error_of(json{{"critical_at", 5}}) ==  // below the threshold
          "swarm.critical_at: expected 0 (never) or an integer in 11..1024, got 5");
    CHECK(error_of(json{{"absolute_cap", 5}}) ==
          "swarm.absolute_cap: expected an integer in threshold (10)..1024, got 5");
    CHECK(
        error_of(json{{"treshold", 3}}) ==
        "swarm.treshold: unknown key, expected one of absolute_cap, budget, critical_at, handoff, "
        "max_fingerprints_per_swarm, max_window_calls, min_workers, progress_aware, threshold, "
        "window_seconds");
    CHECK(error_of(json{{"max_window_calls", 0}}) ==
          "swarm.max_window_calls: expected an integer in 1..100000, got 0");
    CHECK(error_of(json{{"max_window_calls", 40}}) ==  // below absolute_cap's default 50
          "swarm.absolute_cap: expected an integer in threshold (10)..40, got 50");
    CHECK(parse_swarm_rules(json{{"max_window_calls", 10000}, {"absolute_cap", 5000}}).has_value());
    CHECK(error_of(json{{"progress_aware", 1}}) ==
          "swarm.progress_aware: expected true or false, got 1");
    CHECK(error_of(json::array()) == "swarm: expected an object, got []");
  }

  TEST_CASE("10.0 is an integer, as in every reader") {
    const auto r = parse_swarm_rules(json{{"threshold", 12.0}});
    REQUIRE(r.has_value());
    CHECK(r->threshold == 12);
  }

  TEST_CASE("the attocode shape: any number of workers, every call counts") {
    const auto r =
        parse_swarm_rules(json{{"threshold", 10}, {"min_workers", 1}, {"progress_aware", false}});
    REQUIRE(r.has_value());
    CHECK(validate(*r).ok());
  }

  TEST_CASE("budget: caps, ladder and per-prefix overrides, the longest prefix wins") {
    const auto r = parse_swarm_rules(json::parse(R"({"budget":{
      "tokens": 2000000, "amount": 50, "unit": "USD", "warn_fraction": 0.75,
      "prefixes": {"nightly-": {"amount": 10}, "nightly-big-": {"amount": 100, "unit": "EUR"},
                   "free.": {"tokens": 1000, "amount": 0, "terminate_at": 0}}}})"));
    REQUIRE_MESSAGE(r.has_value(), r.error().message());
    const budget_rules& b = r->budget;
    CHECK(b.of("refactor-auth").amount == 50);
    CHECK(b.of("refactor-auth").tokens == 2000000);
    CHECK(b.of("refactor-auth").terminate_at == 1.5);  // the default
    CHECK(b.of("nightly-7").amount == 10);
    CHECK(b.of("nightly-7").tokens == 2000000);  // not overridden: the base's
    CHECK(b.of("nightly-7").unit == "USD");
    CHECK(b.of("nightly-7").warn_fraction == 0.75);
    CHECK(b.of("nightly-big-1").amount == 100);
    CHECK(b.of("nightly-big-1").unit == "EUR");
    CHECK(b.of("free.x").tokens == 1000);
    CHECK(b.of("free.x").terminate_at == 0);
    CHECK(b.of("nightly").amount == 50);  // a prefix must match whole
    const auto back = parse_swarm_rules(to_json(*r));
    REQUIRE(back.has_value());
    CHECK(back->budget == r->budget);
    CHECK_FALSE(swarm_rules{}.budget.base.capped());  // no budget unless configured
  }

  TEST_CASE("budget errors name the key") {
    const auto error_of = [](const char* text) {
      const auto r = parse_swarm_rules(json::parse(text));
      REQUIRE_FALSE(r.has_value());
      return r.error().message();
    };
    CHECK(error_of(R"({"budget":{"warn_fraction":0}})") ==
          "swarm.budget.warn_fraction: expected a number in (0, 1], got 0.0");
    CHECK(error_of(R"({"budget":{"terminate_at":0.5}})") ==
          "swarm.budget.terminate_at: expected 0 (never) or a number in 1..1000, got 0.5");
    CHECK(error_of(R"({"budget":{"amount":-1}})").starts_with("swarm.budget.amount: expected"));
    CHECK(error_of(R"({"budget":{"tokns":5}})").starts_with("swarm.budget.tokns: unknown key"));
    CHECK(error_of(R"({"budget":{"prefixes":{"a-":{"warn_fraction":2}}}})") ==
          "swarm.budget.prefixes.a-.warn_fraction: expected a number in 0..1, got 2");
    CHECK(error_of(R"({"budget":{"prefixes":{"a-":{"terminate_at":0.5}}}})") ==
          "swarm.budget.prefixes.a-.terminate_at: expected 0 (never) or a number in 1..1000, "
          "got 0.5");
    CHECK(error_of(R"({"budget":{"unit":"US\u00a0dollars and more than sixteen bytes"}})")
              .starts_with("swarm.budget.unit:"));
  }
}
