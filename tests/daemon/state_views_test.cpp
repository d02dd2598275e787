// The read views are kept as events arrive (counts, the top fingerprints, the declared
// verdicts); these tests hold them to what a walk over every fingerprint computes, through
// eviction, completion and restore. And the HTTP side: no digest in the list or detail view,
// the digest on its own endpoint.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <random>
#include <string>

#include "loopguard/hex.hpp"
#include "server/http_api.hpp"
#include "state/shared_economics_state.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

// A walk over every fingerprint: what the kept views must equal.
struct walked {
  std::size_t verdicts = 0;
  std::uint64_t calls = 0;
};
walked walk(const shared_economics_state& s, const std::string& swarm) {
  walked w;
  for (const auto& row : s.snapshot().fingerprints) {
    if (row.swarm != swarm) continue;
    if (row.stats.level != severity::none) ++w.verdicts;
    if (row.key.kind == fingerprint_kind::exact) w.calls += row.stats.calls;
  }
  return w;
}

// The kept top (n <= kTopKept) against the full ranking (n > kTopKept walks everything).
void check_views(const shared_economics_state& s, const std::string& swarm) {
  const auto sum = s.summary(swarm);
  REQUIRE(sum.has_value());
  const auto w = walk(s, swarm);
  CHECK(sum->verdicts == w.verdicts);
  CHECK(sum->calls == w.calls);
  CHECK(s.verdicts(swarm).size() == w.verdicts);
  const auto kept = s.top_fingerprints(swarm, shared_economics_state::kTopKept);
  auto all = s.top_fingerprints(swarm, 1u << 30);
  all.resize(std::min(all.size(), shared_economics_state::kTopKept));
  REQUIRE(kept.size() == all.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    CHECK(kept[i].key == all[i].key);
    CHECK(kept[i].stats == all[i].stats);
  }
}

// Random calls over `keys` fingerprints with a skewed popularity, some repeated results.
void random_calls(shared_economics_state& s, std::mt19937_64& rng, int n, std::uint64_t keys,
                  double& t) {
  std::uniform_int_distribution<int> worker(0, 5);
  std::uniform_int_distribution<int> result(0, 3);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t a = rng() % keys, fp = 1 + (a * (rng() % keys)) / keys;  // skewed
    swarm_event e;
    e.swarm = "s";
    e.worker = test::worker_name(worker(rng));
    e.tool = "t" + std::to_string(fp % 7);
    e.exact = fp;
    e.structural = 100000 + fp % 50;
    e.result = static_cast<std::uint64_t>(result(rng));
    e.t = (t += 0.5);
    s.apply(e);
  }
}

nlohmann::json get(const swarm_service& service, const std::string& target, unsigned status) {
  daemon_metrics metrics;
  const auto r = route("GET", target, service, metrics);
  CHECK(r.status == status);
  return nlohmann::json::parse(r.body);
}

}  // namespace

TEST_SUITE("state views") {
  TEST_CASE("kept counts, top and verdicts equal a walk over every fingerprint") {
    swarm_rules rules;
    rules.threshold = 5;
    rules.max_fingerprints_per_swarm = 256;  // evictions, some of them hot fingerprints
    shared_economics_state s(rules);
    std::mt19937_64 rng(42);
    double t = 0;
    for (int round = 0; round < 20; ++round) {
      random_calls(s, rng, 500, 400, t);
      check_views(s, "s");
    }
    CHECK(s.counters().evictions > 0);
    CHECK(s.summary("s")->verdicts > 0);
  }

  TEST_CASE("a restored state keeps the same views") {
    shared_economics_state s;
    std::mt19937_64 rng(7);
    double t = 0;
    random_calls(s, rng, 3000, 200, t);
    shared_economics_state restored;
    restored.restore(s.snapshot());
    check_views(restored, "s");
    CHECK(restored.summary("s")->calls == s.summary("s")->calls);
    random_calls(restored, rng, 1000, 200, t);
    check_views(restored, "s");
  }

  TEST_CASE("a completed swarm starts its views from nothing") {
    shared_economics_state s;
    std::mt19937_64 rng(3);
    double t = 0;
    random_calls(s, rng, 500, 50, t);
    CHECK(s.complete("s"));
    CHECK_FALSE(s.view("s", 20).has_value());
    random_calls(s, rng, 10, 50, t);
    CHECK(s.summary("s")->calls == 10);
    check_views(s, "s");
  }

  TEST_CASE("the list and detail views carry no digest, /digest does") {
    swarm_service service;
    const protocol::event e = test::wire_event(1, 5, 1.0);
    REQUIRE(service.ingest({"a/b", "w0", "i"}, {e}).applied == 1);
    const auto list = get(service, "/api/swarms", 200);
    REQUIRE(list["swarms"].size() == 1);
    CHECK_FALSE(list["swarms"][0].contains("digest"));
    const auto detail = get(service, "/api/swarms/a%2Fb", 200);
    CHECK(detail["calls"] == 1);
    CHECK_FALSE(detail.contains("digest"));
    const auto digest = get(service, "/api/swarms/a%2Fb/digest", 200);
    const auto expected =
        service.read([](const shared_economics_state& s) { return s.digest("a/b"); });
    CHECK(digest["swarm"] == "a/b");
    CHECK(digest["digest"] == to_hex(expected));
    get(service, "/api/swarms/nope/digest", 404);
  }
}
