// bench_similarity: the similarity scorers over a shared corpus, one comparison per iteration.
//
//   bench_similarity --corpus=FILE [Google Benchmark flags]
//
// FILE is the JSON Lines corpus written by `node fuzzball_bench.mjs generate` (scripts/bench/
// similarity runs both sides on the same file). Benchmarks are named scorer/case/length, the
// names fuzzball_bench.mjs reports under. Inputs are UTF-8 std::strings, so the ASCII check and
// decoding are part of what is measured (as string handling is part of fuzzball's time).
#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loopguard/similarity.hpp"

namespace {

namespace sim = loopguard::similarity;

struct text_pair {
  std::string a;
  std::string b;
};

using corpus = std::map<std::string, std::vector<text_pair>>;  // "case/length" -> pairs

corpus load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open corpus " + path);
  corpus out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    out[j.at("case").get<std::string>() + "/" + std::to_string(j.at("length").get<int>())]
        .push_back({j.at("a").get<std::string>(), j.at("b").get<std::string>()});
  }
  return out;
}

template <class Score>
void register_scorer(const std::string& name, const std::string& group,
                     const std::vector<text_pair>& pairs, Score score) {
  benchmark::RegisterBenchmark((name + "/" + group).c_str(),
                               [&pairs, score](benchmark::State& state) {
                                 std::size_t i = 0;
                                 for (auto _ : state) {
                                   const text_pair& p = pairs[i];
                                   benchmark::DoNotOptimize(score(p.a, p.b));
                                   if (++i == pairs.size()) i = 0;
                                 }
                               });
}

void register_all(const corpus& c) {
  for (const auto& [group, pairs] : c) {
    const bool unrelated = group.rfind("unrelated/", 0) == 0;
    const bool multibyte = group.rfind("near_multibyte/", 0) == 0;
    register_scorer("ratio", group, pairs,
                    [](const std::string& a, const std::string& b) { return sim::ratio(a, b); });
    if (unrelated) {
      register_scorer(
          "ratio_cutoff90", group, pairs,
          [](const std::string& a, const std::string& b) { return sim::ratio(a, b, 90.0); });
    }
    if (multibyte) continue;
    // One cached_ratio per pair, built outside the timed loop: the detector's use.
    auto cached = std::make_shared<std::vector<sim::cached_ratio>>();
    for (const auto& p : pairs) cached->emplace_back(std::string_view(p.a));
    const auto& rows = pairs;  // a structured binding: clang-tidy's clang cannot capture it
    benchmark::RegisterBenchmark(
        ("cached_ratio/" + group).c_str(), [&rows, cached](benchmark::State& state) {
          std::size_t i = 0;
          for (auto _ : state) {
            benchmark::DoNotOptimize((*cached)[i].similarity(std::string_view(rows[i].b)));
            if (++i == rows.size()) i = 0;
          }
        });
    register_scorer("partial_ratio", group, pairs, [](const std::string& a, const std::string& b) {
      return sim::partial_ratio(a, b);
    });
    register_scorer(
        "token_sort_ratio", group, pairs,
        [](const std::string& a, const std::string& b) { return sim::token_sort_ratio(a, b); });
    register_scorer(
        "token_set_ratio", group, pairs,
        [](const std::string& a, const std::string& b) { return sim::token_set_ratio(a, b); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus_path;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    constexpr const char* flag = "--corpus=";
    if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) {
      corpus_path = argv[i] + std::strlen(flag);
    } else {
      args.push_back(argv[i]);
    }
  }
  if (corpus_path.empty()) {
    std::cerr << "usage: bench_similarity --corpus=FILE [benchmark flags]\n"
                 "(scripts/bench/similarity writes the corpus and runs this)\n";
    return 2;
  }
  static const corpus c = load(corpus_path);  // outlives the registered benchmarks
  register_all(c);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
