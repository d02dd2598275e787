// The scorers against tests/data/similarity/golden.jsonl, made by scripts/gen/similarity_golden.mjs
// from fuzzball and from plain dynamic-programming references (see docs/similarity.md).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "loopguard/similarity.hpp"
#include "loopguard/utf8.hpp"

namespace sim = loopguard::similarity;

namespace {

constexpr double exact_tolerance = 1e-9;
constexpr std::size_t min_golden_pairs = 1000;

struct golden_pair {
  std::size_t line = 0;
  nlohmann::json record;
  std::u32string a;
  std::u32string b;
};

std::vector<golden_pair> load_golden() {
  const std::string path = LOOPGUARD_TEST_DATA_DIR "/similarity/golden.jsonl";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::vector<golden_pair> pairs;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    golden_pair p;
    p.line = line;
    p.record = nlohmann::json::parse(text);
    p.a = loopguard::utf8::decode(p.record.at("a").get<std::string>());
    p.b = loopguard::utf8::decode(p.record.at("b").get<std::string>());
    pairs.push_back(std::move(p));
  }
  return pairs;
}

const std::vector<golden_pair>& golden() {
  static const std::vector<golden_pair> pairs = load_golden();
  return pairs;
}

double exact_score(std::size_t lcs, std::size_t total) {
  return total == 0 ? 100.0 : 200.0 * static_cast<double>(lcs) / static_cast<double>(total);
}

// fuzzball's _ratio, operation for operation: Math.round(100 * ((lensum - dist) / lensum)) with
// dist the Indel distance lensum - 2 * lcs. JavaScript numbers are IEEE doubles, so this is
// bit-exact; Math.round and std::round agree on non-negative values.
double fuzzball_ratio(std::size_t lcs, std::size_t total) {
  const double lensum = static_cast<double>(total);
  const double dist = static_cast<double>(total - 2 * lcs);
  return std::round(100.0 * ((lensum - dist) / lensum));
}

// True when 200 * lcs / total is exactly halfway between two integers.
bool exactly_half(std::size_t lcs, std::size_t total) {
  return (400 * lcs) % total == 0 && ((400 * lcs) / total) % 2 == 1;
}

}  // namespace

TEST_SUITE("similarity") {
  TEST_CASE("similarity golden: file spans the required corpus") {
    const auto& pairs = golden();
    REQUIRE(pairs.size() >= min_golden_pairs);
    std::size_t longest = 0;
    std::size_t astral = 0;
    std::size_t empty = 0;
    for (const auto& p : pairs) {
      longest = std::max({longest, p.a.size(), p.b.size()});
      if (p.a.empty() || p.b.empty()) ++empty;
      for (char32_t c : p.a + p.b) {
        if (c > 0xFFFF) {
          ++astral;
          break;
        }
      }
    }
    CHECK(longest == 4096);
    CHECK(astral > 50);
    CHECK(empty > 0);
  }

  TEST_CASE(
      "similarity golden: ratio, token_sort_ratio and token_set_ratio equal the references "
      "exactly") {
    for (const auto& p : golden()) {
      CAPTURE(p.line);
      const auto& r = p.record;
      REQUIRE(p.a.size() == r.at("len_a").get<std::size_t>());
      REQUIRE(p.b.size() == r.at("len_b").get<std::size_t>());
      const auto lcs = r.at("lcs").get<std::size_t>();
      REQUIRE(sim::lcs_length(p.a, p.b) == lcs);
      REQUIRE(std::abs(sim::ratio(p.a, p.b) - exact_score(lcs, p.a.size() + p.b.size())) <=
              exact_tolerance);
      const double sorted =
          exact_score(r.at("sort_lcs").get<std::size_t>(), r.at("sort_len").get<std::size_t>());
      REQUIRE(std::abs(sim::token_sort_ratio(p.a, p.b) - sorted) <= exact_tolerance);
      REQUIRE(std::abs(sim::token_set_ratio(p.a, p.b) - r.at("token_set").get<double>()) <=
              exact_tolerance);
    }
  }

  TEST_CASE("similarity golden: partial_ratio equals the brute-force best window") {
    std::size_t checked = 0;
    std::size_t longest_haystack = 0;
    for (const auto& p : golden()) {
      if (p.record.at("partial").is_null()) continue;  // too costly for the brute force
      CAPTURE(p.line);
      REQUIRE(std::abs(sim::partial_ratio(p.a, p.b) - p.record.at("partial").get<double>()) <=
              exact_tolerance);
      ++checked;
      longest_haystack = std::max({longest_haystack, p.a.size(), p.b.size()});
    }
    CHECK(checked >= min_golden_pairs * 3 / 4);
    CHECK(longest_haystack >= 4000);
    // The pairs too long for the brute force still keep the cutoff contract on their score.
    for (const auto& p : golden()) {
      if (!p.record.at("partial").is_null()) continue;
      CAPTURE(p.line);
      const double score = sim::partial_ratio(p.a, p.b);
      CHECK(score >= 0.0);
      CHECK(score <= 100.0);
      CHECK(sim::partial_ratio(p.a, p.b, score) == score);
      if (score < 100.0) CHECK(sim::partial_ratio(p.a, p.b, std::nextafter(score, 101.0)) == 0.0);
    }
  }

  TEST_CASE("similarity golden: scores round to fuzzball's integers") {
    std::size_t compared = 0;
    std::size_t halfway = 0;
    for (const auto& p : golden()) {
      CAPTURE(p.line);
      const auto& r = p.record;
      const std::size_t total = p.a.size() + p.b.size();
      const double ours = sim::ratio(p.a, p.b);
      const auto fb = r.at("fb_ratio").get<double>();
      if (p.a.empty() || p.b.empty()) {
        // fuzzball scores any empty input 0 ("invalid"); we score two empty strings 100, as
        // rapidfuzz does, and one empty string 0.
        CHECK(fb == 0.0);
        CHECK(ours == (total == 0 ? 100.0 : 0.0));
        continue;
      }
      const auto lcs = r.at("lcs").get<std::size_t>();
      // Our reading of fuzzball's arithmetic must be right, bit for bit ...
      REQUIRE(fuzzball_ratio(lcs, total) == fb);
      // ... and our score rounds to it, except where the exact value is x.5 and fuzzball's
      // two roundings ((l - d) / l, then * 100) land just below the half.
      ++compared;
      if (std::round(ours) != fb) {
        REQUIRE(exactly_half(lcs, total));
        REQUIRE(fb == std::round(ours) - 1);
        MESSAGE("ratio at x.5, line " << p.line << ": 200*" << lcs << "/" << total << " = " << ours
                                      << ", fuzzball " << fb);
        ++halfway;
      }

      if (!r.at("fb_token_sort").is_null()) {
        const auto sort_len = r.at("sort_len").get<std::size_t>();
        const double ours_sorted = sim::token_sort_ratio(p.a, p.b);
        const auto fb_sorted = r.at("fb_token_sort").get<double>();
        if (sort_len == 0) {
          // No tokens on either side: fuzzball's guard gives 0, ours ratio("", "") = 100.
          CHECK(fb_sorted == 0.0);
        } else if (std::round(ours_sorted) != fb_sorted) {
          REQUIRE(exactly_half(r.at("sort_lcs").get<std::size_t>(), sort_len));
          REQUIRE(fb_sorted == std::round(ours_sorted) - 1);
          MESSAGE("token_sort_ratio at x.5, line " << p.line << ": " << ours_sorted << ", fuzzball "
                                                   << fb_sorted);
          ++halfway;
        }
      }
      const double ours_set = sim::token_set_ratio(p.a, p.b);
      const auto fb_set = r.at("fb_token_set").get<double>();
      if (std::round(ours_set) != fb_set) {
        // The winning comparison is exactly at x.5 (see above); its LCS is not in the file, so
        // check the distance instead.
        REQUIRE(std::abs(ours_set - std::floor(ours_set) - 0.5) <= exact_tolerance);
        REQUIRE(fb_set == std::round(ours_set) - 1);
        MESSAGE("token_set_ratio at x.5, line " << p.line << ": " << ours_set << ", fuzzball "
                                                << fb_set);
        ++halfway;
      }
    }
    CHECK(compared >= min_golden_pairs);
    MESSAGE("golden pairs compared with fuzzball: "
            << compared << ", exact x.5 values fuzzball rounds down: " << halfway);
  }
}
