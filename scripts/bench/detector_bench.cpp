// Google Benchmark: a realistic mixed stream through the default ExecutionEconomicsManager.
// Tool calls carry ~300 B of JSON arguments, results ~1 KiB, text turns ~2 KiB. Each benchmark
// times one kind of event (manual timing around the one call) while the others keep the
// manager's state realistic. scripts/bench/detector runs it and prints the table.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "loopguard/execution_economics_manager.hpp"

namespace {

constexpr std::size_t kStream = 4096;

struct call {
  std::string tool, args, output;
  bool ok;
};

std::string words(std::mt19937_64& rng, std::size_t bytes) {
  static const char* kWords[] = {"the",    "parser", "returns", "token",  "error", "line",
                                 "config", "loader", "value",   "module", "test",  "failed",
                                 "build",  "cache",  "request", "retry",  "user",  "schema"};
  std::string out;
  while (out.size() < bytes) {
    out += kWords[rng() % std::size(kWords)];
    out += (rng() % 11 == 0) ? ".\n" : " ";
  }
  out.resize(bytes);
  return out;
}

std::vector<call> make_calls() {
  std::mt19937_64 rng(42);
  static const char* kTools[] = {"read_file", "edit_file", "bash",       "search",
                                 "grep",      "list_dir",  "write_file", "fetch"};
  std::vector<call> calls;
  for (std::size_t i = 0; i < kStream; ++i) {
    call c;
    c.tool = kTools[rng() % std::size(kTools)];
    // ~300 B of arguments: a path, a query and some content; one in ten repeats an earlier call.
    if (i > 10 && rng() % 10 == 0) {
      c = calls[i - 1 - rng() % 10];
    } else {
      c.args = R"({"path":"src/module_)" + std::to_string(rng() % 50) + R"(.cc","query":")" +
               words(rng, 60) + R"(","content":")" + words(rng, 180) + R"(","limit":)" +
               std::to_string(rng() % 100) + "}";
      for (auto& ch : c.args) {
        if (ch == '\n') ch = ' ';
      }
      c.output = words(rng, 1024);
      c.ok = rng() % 5 != 0;
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

std::vector<std::string> make_texts() {
  std::mt19937_64 rng(7);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < 64; ++i) texts.push_back(words(rng, 2048));
  return texts;
}

const std::vector<call>& calls() {
  static const auto c = make_calls();
  return c;
}
const std::vector<std::string>& texts() {
  static const auto t = make_texts();
  return t;
}

using clk = std::chrono::steady_clock;

void BM_ToolCall(benchmark::State& state) {
  loopguard::ExecutionEconomicsManager m;
  std::size_t i = 0;
  for (auto _ : state) {
    const call& c = calls()[i++ % kStream];
    const auto t0 = clk::now();
    auto v = m.on_tool_call_json(c.tool, c.args);
    const auto t1 = clk::now();
    benchmark::DoNotOptimize(v);
    m.on_tool_result(c.tool, c.ok, c.output);
    if (i % 7 == 0) m.on_text(texts()[i % texts().size()]);
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}
BENCHMARK(BM_ToolCall)->UseManualTime();

void BM_ToolResult(benchmark::State& state) {
  loopguard::ExecutionEconomicsManager m;
  std::size_t i = 0;
  for (auto _ : state) {
    const call& c = calls()[i++ % kStream];
    m.on_tool_call_json(c.tool, c.args);
    const auto t0 = clk::now();
    auto v = m.on_tool_result(c.tool, c.ok, c.output);
    const auto t1 = clk::now();
    benchmark::DoNotOptimize(v);
    if (i % 7 == 0) m.on_text(texts()[i % texts().size()]);
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}
BENCHMARK(BM_ToolResult)->UseManualTime();

// Times on_text for 2 KiB turns, with a call and its result between turns.
void time_texts(benchmark::State& state, loopguard::ExecutionEconomicsManager& m) {
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& text = texts()[i++ % texts().size()];
    const auto t0 = clk::now();
    auto v = m.on_text(text);
    const auto t1 = clk::now();
    benchmark::DoNotOptimize(v);
    const call& c = calls()[i % kStream];
    m.on_tool_call_json(c.tool, c.args);
    m.on_tool_result(c.tool, c.ok, c.output);
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

// A 2 KiB text turn through every text detector (output similarity, content loop, summary).
void BM_Text2KiB(benchmark::State& state) {
  loopguard::ExecutionEconomicsManager m;
  time_texts(state, m);
}
BENCHMARK(BM_Text2KiB)->UseManualTime();

// The same 2 KiB text checked against the last five outputs and nothing else: the target's
// definition ("a 2 KiB text output checked against the last five"). Only the output-similarity
// rule is on among the text rules; the call rules stay on so the stream is the same.
void BM_TextVsLastFive(benchmark::State& state) {
  loopguard::manager_config config;
  config.content.enabled = false;
  config.summary.enabled = false;
  config.limit.enabled = false;
  loopguard::ExecutionEconomicsManager m(config);
  time_texts(state, m);
}
BENCHMARK(BM_TextVsLastFive)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
