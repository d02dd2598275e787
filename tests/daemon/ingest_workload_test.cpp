// A fixed ingest workload for measuring the daemon's hot path with callgrind (not a timing
// test): 8 workers of one swarm send batches of 32 events; a rotating set of dead ends is
// declared, and as the swarm clock moves on, their calls leave the window.
//
//   valgrind --tool=callgrind
//     --toggle-collect='loopguard::daemon::swarm_service::ingest*'
//     build/daemon_tests -tc='ingest workload: *'
#include <doctest/doctest.h>

#include <random>

#include "service/swarm_service.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

constexpr std::size_t kWorkers = 8;
constexpr std::size_t kBatch = 32;
constexpr std::size_t kEvents = 60000;

struct workload_result {
  std::size_t verdicts = 0, lifted = 0;
  std::uint64_t digest = 0;
};

protocol::event workload_event(std::mt19937_64& rng, std::size_t i, std::uint64_t seq) {
  const std::uint64_t phase = i / 10000;  // the dead ends change every 10000 events
  const bool dead_end = rng() % 10 < 3;
  const std::uint64_t fp = dead_end ? 1 + phase * 40 + rng() % 40 : 100000 + rng() % 5000;
  const std::uint64_t result = dead_end ? 7 : rng() % 4;
  return test::wire_event(seq, fp, 0.5 * static_cast<double>(i), result);
}

workload_result run_workload(state_options options = {}) {
  swarm_service svc({}, options);
  std::mt19937_64 rng(42);
  std::vector<std::uint64_t> seq(kWorkers, 0);
  workload_result out;
  std::vector<protocol::event> batch;
  for (std::size_t i = 0; i < kEvents;) {
    const std::size_t w = (i / kBatch) % kWorkers;
    batch.clear();
    for (std::size_t k = 0; k < kBatch; ++k, ++i) batch.push_back(workload_event(rng, i, ++seq[w]));
    const worker_identity id{"s", test::worker_name(static_cast<long>(w)), "i"};
    for (const auto& v : svc.ingest(id, batch).verdicts) {
      ++(v.level == severity::none ? out.lifted : out.verdicts);
    }
  }
  out.digest = svc.read([](const shared_economics_state& s) { return s.digest(); });
  return out;
}

}  // namespace

TEST_SUITE("swarm_service") {
  TEST_CASE("ingest workload: rotating dead ends, a moving window (for callgrind)") {
    const auto a = run_workload();
    CHECK(a.verdicts > 0);
    CHECK(a.lifted > 0);
    CHECK(run_workload().digest == a.digest);  // deterministic
  }

  TEST_CASE("ingest workload without lifting (protocol v1), for callgrind") {
    const auto a = run_workload({.lift_verdicts = false});
    CHECK(a.verdicts > 0);
    CHECK(a.lifted == 0);
  }
}
