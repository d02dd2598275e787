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
    CHECK_FALSE(validate(r).has_value());
  }

  TEST_CASE("a partial object overrides only its keys and round-trips") {
    swarm_rules r;
    REQUIRE_FALSE(parse_swarm_rules(json{{"min_workers", 1}, {"progress_aware", false}}, r));
    CHECK(r.min_workers == 1);
    CHECK_FALSE(r.progress_aware);
    CHECK(r.threshold == 10);
    swarm_rules back;
    REQUIRE_FALSE(parse_swarm_rules(to_json(r), back));
    CHECK(to_json(back) == to_json(r));
  }

  TEST_CASE("errors name the key and the allowed range, and leave the rules unchanged") {
    swarm_rules r;
    auto e = parse_swarm_rules(json{{"threshold", 0}}, r);
    REQUIRE(e.has_value());
    CHECK(e->find("swarm.threshold") != std::string::npos);
    CHECK(e->find("1..1024") != std::string::npos);
    CHECK(r.threshold == 10);

    e = parse_swarm_rules(json{{"window_seconds", "long"}}, r);
    REQUIRE(e.has_value());
    CHECK(e->find("swarm.window_seconds") != std::string::npos);

    e = parse_swarm_rules(json{{"critical_at", 5}}, r);  // below the threshold
    REQUIRE(e.has_value());
    CHECK(e->find("swarm.critical_at") != std::string::npos);

    e = parse_swarm_rules(json{{"treshold", 3}}, r);
    REQUIRE(e.has_value());
    CHECK(e->find("swarm.treshold: unknown key") != std::string::npos);

    e = parse_swarm_rules(json{{"progress_aware", 1}}, r);
    REQUIRE(e.has_value());
    CHECK(e->find("true or false") != std::string::npos);

    CHECK(parse_swarm_rules(json::array(), r).has_value());
  }

  TEST_CASE("the attocode shape: any number of workers, every call counts") {
    swarm_rules r;
    REQUIRE_FALSE(parse_swarm_rules(
        json{{"threshold", 10}, {"min_workers", 1}, {"progress_aware", false}}, r));
    CHECK_FALSE(validate(r).has_value());
  }
}
