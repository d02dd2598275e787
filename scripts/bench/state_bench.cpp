// Google Benchmark: one event into a swarm whose hot fingerprint's window is full, so every
// call in pushes the oldest out (the daemon's steady state for a dead end that goes on for a
// long time), at windows of 16, 1,024 (the default max_window_calls) and 10,000 calls. The peer
// in the same run is the container the window was before call_window: a vector erased at its
// front, at the same sizes. scripts/bench/state runs it and prints the table.
#include <benchmark/benchmark.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "state/call_window.hpp"
#include "state/shared_economics_state.hpp"

namespace {

using loopguard::daemon::shared_economics_state;
using loopguard::daemon::swarm_event;
using loopguard::daemon::swarm_rules;
using loopguard::daemon::window_call;

// Events of 8 workers repeating one call with one result: counted, never declared (the
// threshold is the window), so only the window's work is timed.
void BM_FullWindowEvent(benchmark::State& state) {
  const auto window = static_cast<std::uint32_t>(state.range(0));
  swarm_rules rules;
  rules.max_window_calls = window;
  rules.threshold = window;
  rules.absolute_cap = window;
  rules.critical_at = 0;
  rules.window_seconds = 1e9;
  shared_economics_state s(rules);
  swarm_event e;
  e.swarm = "bench";
  e.tool = "search";
  e.summary = "query=config loader";
  e.exact = 0x9a3c55e0d1b27f48;
  e.structural = 0x0c7e11aa93f2b564;
  e.result = 0x51d0e2c4a8b39f77;
  e.ok = false;
  const std::string workers[] = {"w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"};
  double t = 0;
  for (std::uint32_t i = 0; i < window; ++i) {  // fill it
    e.worker = workers[i % 8];
    e.t = t++;
    benchmark::DoNotOptimize(s.apply(e));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    e.worker = workers[i++ % 8];
    e.t = t++;
    benchmark::DoNotOptimize(s.apply(e));
  }
}
BENCHMARK(BM_FullWindowEvent)->Arg(16)->Arg(1024)->Arg(10000);

// The peer: a full window kept in a vector, the oldest call erased from its front.
void BM_VectorEraseFront(benchmark::State& state) {
  std::vector<window_call> w(static_cast<std::size_t>(state.range(0)));
  double t = 0;
  for (auto _ : state) {
    w.erase(w.begin());
    w.push_back({t++, 1, true});
    benchmark::DoNotOptimize(w.data());
  }
}
BENCHMARK(BM_VectorEraseFront)->Arg(16)->Arg(1024)->Arg(10000);

// The window alone, as the state uses it.
void BM_CallWindowPopPush(benchmark::State& state) {
  loopguard::daemon::call_window w;
  for (std::int64_t i = 0; i < state.range(0); ++i) w.push_back({double(i), 1, true});
  double t = 0;
  for (auto _ : state) {
    w.pop_front();
    w.push_back({t++, 1, true});
    benchmark::DoNotOptimize(&w.front());
  }
}
BENCHMARK(BM_CallWindowPopPush)->Arg(16)->Arg(1024)->Arg(10000);

// The daemon's saturated ingest without the network (scripts/bench/daemon's load): 16 workers
// send batches of 64 calls drawn at random from 100,000, each with a new result, into one
// swarm already holding them all (200,000 fingerprints over tens of megabytes, so nearly every
// entry is a trip to memory). Argument: 0 applies the events as they come, 1 with the
// read-ahead swarm_service uses. Per event (items_per_second).
void BM_ScatteredBatch(benchmark::State& state) {
  constexpr std::uint64_t kKeys = 100000;
  constexpr std::size_t kBatch = 64;
  shared_economics_state s;
  std::mt19937_64 rng(42);
  std::vector<loopguard::protocol::event> batch(kBatch);
  swarm_event e;
  e.swarm = "bench";
  const std::string workers[] = {"w1", "w2",  "w3",  "w4",  "w5",  "w6",  "w7",  "w8",
                                 "w9", "w10", "w11", "w12", "w13", "w14", "w15", "w16"};
  double t = 0;
  std::size_t round = 0;
  const bool ahead = state.range(0) != 0;
  const auto send = [&] {
    for (auto& ev : batch) {
      ev.tool = "search";
      ev.summary = "query=bench";
      ev.exact = 0x1000000ULL + rng() % kKeys;
      ev.structural = ev.exact ^ 0x5bd1e995ULL;
      ev.result = rng();
      ev.t = t;
      t += 1e-3;
    }
    e.worker = workers[round++ % 16];
    std::optional<shared_economics_state::read_ahead> r;
    if (ahead) r.emplace(s, e.swarm, batch);
    for (std::size_t i = 0; i < kBatch; ++i) {
      if (r) r->before(i);
      assign(e, batch[i]);
      benchmark::DoNotOptimize(s.apply(e));
    }
  };
  for (int i = 0; i < 1000000 / 64; ++i) send();
  for (auto _ : state) send();
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
}
BENCHMARK(BM_ScatteredBatch)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
