// `loopguard similarity`: scores the pairs of a JSON Lines file.
//
//   loopguard similarity [--scorer NAME] [--cutoff X] [--process] --pairs FILE
//
// Each non-blank line of FILE is an object with string fields "a" and "b" (other fields are
// ignored). The whole file is read and checked before anything is printed, so a bad line
// (reported as FILE:LINE: what is wrong, exit status 2) never leaves partial output behind.
// Output: one object per pair, {"line": N, "<scorer>": score, ...}, N being the line in FILE.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "loopguard/json_fields.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/similarity.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::cli {
namespace {

namespace sim = loopguard::similarity;

constexpr int bad_input_exit = 2;

struct similarity_options {
  std::string pairs_path;
  std::string scorer_name;  // empty: every scorer
  double cutoff = 0;
  bool process = false;
};

struct input_pair {
  std::size_t line;
  std::u32string a;
  std::u32string b;
};

[[noreturn]] void fail(const std::string& message) {
  std::cerr << utf8::repair(message) << '\n';
  throw CLI::RuntimeError(bad_input_exit);
}

// Reads every pair, or reports the first bad line.
std::vector<input_pair> read_pairs(const std::string& path, bool process) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path + ": cannot open file");
  std::vector<input_pair> pairs;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line) + ": ";
    const auto doc = json_input::parse(text);
    if (!doc) fail(where + doc.error().message());
    json_fields::reader r(doc->value,
                          {.name = "line", .unknown = json_fields::unknown_keys::ignore});
    std::string a, b;
    r.string(json_fields::required("a"), a);
    r.string(json_fields::required("b"), b);
    if (status s = r.finish(); !s.ok()) fail(where + s.message());
    input_pair pair{line, utf8::decode(a), utf8::decode(b)};
    if (process) {
      pair.a = sim::default_process(pair.a);
      pair.b = sim::default_process(pair.b);
    }
    pairs.push_back(std::move(pair));
  }
  if (in.bad()) fail(path + ": read error");
  return pairs;
}

void run(const similarity_options& options) {
  std::vector<sim::scorer> scorers;
  if (options.scorer_name.empty()) {
    scorers = {sim::scorer::ratio, sim::scorer::partial_ratio, sim::scorer::token_sort_ratio,
               sim::scorer::token_set_ratio};
  } else {
    const auto s = sim::parse_scorer(options.scorer_name);
    if (!s) {
      std::cerr << "unknown scorer: " << utf8::repair(options.scorer_name) << '\n';
      throw CLI::RuntimeError(bad_input_exit);
    }
    scorers = {*s};
  }
  const std::vector<input_pair> pairs = read_pairs(options.pairs_path, options.process);
  for (const auto& pair : pairs) {
    nlohmann::ordered_json out;
    out["line"] = pair.line;
    for (sim::scorer s : scorers) {
      out[std::string(sim::scorer_name(s))] = sim::score(s, pair.a, pair.b, options.cutoff);
    }
    std::cout << json_input::dump(out) << '\n';
  }
  std::cout.flush();
}

}  // namespace

void add_similarity_command(CLI::App& app) {
  auto options = std::make_shared<similarity_options>();
  CLI::App* cmd = app.add_subcommand(
      "similarity",
      "Score pairs of strings (JSON Lines {\"a\": ..., \"b\": ...}) with fuzzy scorers");
  cmd->add_option("--pairs", options->pairs_path, "JSON Lines file of {\"a\": ..., \"b\": ...}")
      ->required();
  cmd->add_option("--scorer", options->scorer_name,
                  "ratio, partial_ratio, token_sort_ratio or token_set_ratio (default: all four)")
      ->check(CLI::IsMember({"ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio"}));
  cmd->add_option("--cutoff", options->cutoff,
                  "Scores below this (0..100) are reported as 0; lets the scorers stop early")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("--process", options->process,
                "Lowercase, turn non-alphanumerics into spaces and trim both strings first");
  cmd->callback([options] { run(*options); });
}

}  // namespace loopguard::cli
