#include "loopguard/similarity.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "loopguard/detail/tokens.hpp"
#include "loopguard/utf8.hpp"

namespace sim = loopguard::similarity;

namespace {

// ---- plain reference implementations: O(nm) dynamic programming, every window ----

std::size_t reference_lcs(std::u32string_view a, std::u32string_view b) {
  std::vector<std::size_t> prev(b.size() + 1, 0);
  std::vector<std::size_t> cur(b.size() + 1, 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

double reference_ratio(std::u32string_view a, std::u32string_view b) {
  if (a.empty() && b.empty()) return 100.0;
  return 200.0 * static_cast<double>(reference_lcs(a, b)) /
         static_cast<double>(a.size() + b.size());
}

double reference_partial_one_way(std::u32string_view needle, std::u32string_view hay) {
  const std::size_t m = needle.size();
  const std::size_t n = hay.size();
  double best = 0;
  auto consider = [&](std::size_t start, std::size_t end) {
    best = std::max(best, reference_ratio(needle, hay.substr(start, end - start)));
  };
  for (std::size_t i = 1; i < m; ++i) consider(0, i);
  for (std::size_t i = 0; i + m <= n; ++i) consider(i, i + m);
  for (std::size_t i = n - m + 1; i < n; ++i) consider(i, n);
  return best;
}

double reference_partial(std::u32string_view a, std::u32string_view b) {
  if (a.empty() && b.empty()) return 100.0;
  if (a.empty() || b.empty()) return 0.0;
  if (a.size() > b.size()) std::swap(a, b);
  double best = reference_partial_one_way(a, b);
  if (a.size() == b.size()) best = std::max(best, reference_partial_one_way(b, a));
  return best;
}

// Random strings over a small alphabet (many matches) mixing ASCII, BMP and astral code points.
class string_source {
 public:
  explicit string_source(unsigned seed) : gen_(seed) {}
  std::u32string random(std::size_t length, std::u32string_view alphabet) {
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::u32string s;
    for (std::size_t i = 0; i < length; ++i) s.push_back(alphabet[pick(gen_)]);
    return s;
  }
  std::u32string mutate(std::u32string s, std::size_t edits, std::u32string_view alphabet) {
    for (std::size_t e = 0; e < edits; ++e) {
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, s.size())(gen_);
      const std::u32string c = random(1, alphabet);
      const int op = std::uniform_int_distribution<int>(0, 2)(gen_);
      if (op == 0 || s.empty()) {
        s.insert(at, c);
      } else if (op == 1) {
        s.erase(std::min(at, s.size() - 1), 1);
      } else {
        s[std::min(at, s.size() - 1)] = c[0];
      }
    }
    return s;
  }
  std::size_t below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n)(gen_);
  }

 private:
  std::mt19937 gen_;
};

constexpr std::u32string_view small_alphabet = U"abc d\u00E9\u6570\U0001F600";
constexpr std::u32string_view wide_alphabet =
    U"abcdefghijklmnopqrstuvwxyz ABC\u00E9\u00DF\u03A9\u042F\u6570\u636E\U0001F600\U0001F680";

}  // namespace

TEST_SUITE("similarity") {
  TEST_CASE("similarity: ratio matches hand-checked values") {
    CHECK(sim::ratio(std::string_view("Hello world"), std::string_view("Hello world!")) ==
          doctest::Approx(2200.0 / 23.0).epsilon(1e-12));  // 95.652...
    const double seed_pair =
        sim::ratio(std::string_view("Let me check the database for user information..."),
                   std::string_view("Checking the database for user information..."));
    CHECK(seed_pair == doctest::Approx(87.234).epsilon(1e-4));  // 82 of 94: 200*41/94
    CHECK(seed_pair == doctest::Approx(8200.0 / 94.0).epsilon(1e-12));
    CHECK(sim::ratio(std::string_view("this is a test"), std::string_view("this is a test!")) ==
          doctest::Approx(2800.0 / 29.0).epsilon(1e-12));
  }

  TEST_CASE("similarity: ratio of identical strings is 100 and of disjoint strings 0") {
    CHECK(sim::ratio(U"same text", U"same text") == 100.0);
    CHECK(sim::ratio(U"abc", U"xyz") == 0.0);
    CHECK(sim::ratio(U"", U"") == 100.0);
    CHECK(sim::ratio(U"", U"abc") == 0.0);
    CHECK(sim::ratio(U"abc", U"") == 0.0);
    CHECK(sim::ratio(std::string_view(""), std::string_view("")) == 100.0);
  }

  TEST_CASE("similarity: ratio compares code points, not bytes") {
    CHECK(sim::ratio(std::string_view("\xC3\xA9"), std::string_view("e")) == 0.0);
    CHECK(sim::ratio(std::string_view("\xF0\x9F\x98\x80"
                                      "a"),
                     std::string_view("\xF0\x9F\x98\x80"
                                      "b")) == 50.0);
    // Invalid bytes are U+FFFD, which equals U+FFFD.
    CHECK(sim::ratio(std::string_view("\xFF"), std::string_view("\xEF\xBF\xBD")) == 100.0);
  }

  TEST_CASE("similarity: ratio equals the dynamic-programming reference at every word boundary") {
    string_source source(20261122);
    const std::size_t lengths[] = {0,   1,   2,   31,  63,  64,  65,  100,  127,
                                   128, 129, 200, 255, 256, 257, 500, 1000, 4096};
    for (std::size_t la : lengths) {
      for (std::size_t lb : lengths) {
        if (la * lb > 1100000) continue;  // the reference is quadratic
        const auto alphabet = (la + lb) % 2 == 0 ? small_alphabet : wide_alphabet;
        const std::u32string a = source.random(la, alphabet);
        const std::u32string b =
            lb == la ? source.mutate(a, 1 + la / 10, alphabet) : source.random(lb, alphabet);
        CAPTURE(la);
        CAPTURE(lb);
        REQUIRE(sim::lcs_length(a, b) == reference_lcs(a, b));
        REQUIRE(sim::ratio(a, b) == doctest::Approx(reference_ratio(a, b)).epsilon(1e-12));
      }
    }
    const std::u32string long_a = source.random(4096, wide_alphabet);
    const std::u32string long_b = source.mutate(long_a, 300, wide_alphabet);
    CHECK(sim::lcs_length(long_a, long_b) == reference_lcs(long_a, long_b));
  }

  TEST_CASE("similarity: scores are symmetric") {
    string_source source(7);
    for (int round = 0; round < 300; ++round) {
      const std::u32string a = source.random(source.below(150), small_alphabet);
      const std::u32string b = source.mutate(a, source.below(20), small_alphabet);
      CHECK(sim::ratio(a, b) == sim::ratio(b, a));
      CHECK(sim::partial_ratio(a, b) == sim::partial_ratio(b, a));
      CHECK(sim::token_sort_ratio(a, b) == sim::token_sort_ratio(b, a));
      CHECK(sim::token_set_ratio(a, b) == sim::token_set_ratio(b, a));
    }
  }

  TEST_CASE("similarity: a cutoff returns either 0 or the exact score") {
    string_source source(99);
    const double cutoffs[] = {0.0, 10.0, 50.0, 66.6, 80.0, 90.0, 95.0, 99.9, 100.0};
    for (int round = 0; round < 400; ++round) {
      const std::size_t length = source.below(round < 300 ? 200 : 2000);
      const auto alphabet = round % 2 == 0 ? small_alphabet : wide_alphabet;
      const std::u32string a = source.random(length, alphabet);
      const std::u32string b = round % 3 == 0
                                   ? source.random(source.below(length + 10), alphabet)
                                   : source.mutate(a, source.below(length / 4 + 1), alphabet);
      const double exact[] = {sim::ratio(a, b), sim::partial_ratio(a, b),
                              sim::token_sort_ratio(a, b), sim::token_set_ratio(a, b)};
      const sim::cached_ratio cached(a);
      for (double cutoff : cutoffs) {
        CAPTURE(cutoff);
        for (int s = 0; s < 4; ++s) {
          const double got = sim::score(static_cast<sim::scorer>(s), a, b, cutoff);
          REQUIRE(got == (exact[s] >= cutoff ? exact[s] : 0.0));
        }
        REQUIRE(cached.similarity(b, cutoff) == (exact[0] >= cutoff ? exact[0] : 0.0));
      }
      // The exact score is its own cutoff: it must survive it.
      REQUIRE(sim::ratio(a, b, exact[0]) == exact[0]);
    }
  }

  TEST_CASE("similarity: cached_ratio equals ratio for code point and UTF-8 input") {
    string_source source(4242);
    for (int round = 0; round < 200; ++round) {
      const auto alphabet = round % 2 == 0 ? small_alphabet : wide_alphabet;
      const std::u32string a = source.random(source.below(round < 150 ? 150 : 1500), alphabet);
      const sim::cached_ratio cached(a);
      CHECK(cached.size() == a.size());
      for (int k = 0; k < 3; ++k) {
        const std::u32string b = source.mutate(a, source.below(a.size() / 3 + 2), alphabet);
        REQUIRE(cached.similarity(b) == sim::ratio(a, b));
        REQUIRE(cached.similarity(loopguard::utf8::encode(b)) == sim::ratio(a, b));
      }
      const std::string ascii = "plain ascii other string";
      REQUIRE(cached.similarity(std::string_view(ascii)) ==
              sim::ratio(a, loopguard::utf8::decode(ascii)));
    }
    const sim::cached_ratio from_utf8(std::string_view("caf\xC3\xA9 au lait"));
    CHECK(from_utf8.similarity(std::string_view("cafe au lait")) ==
          doctest::Approx(2200.0 / 24.0).epsilon(1e-12));
    CHECK(sim::cached_ratio(std::u32string_view()).similarity(std::u32string_view()) == 100.0);
  }

  TEST_CASE("similarity: partial_ratio matches hand-checked alignments") {
    CHECK(sim::partial_ratio(std::string_view("this is a test"),
                             std::string_view("this is a test!")) == 100.0);
    // rapidfuzz's documented example: "cetain" against "certain" in the middle.
    CHECK(sim::partial_ratio(std::string_view("a certain string"), std::string_view("cetain")) ==
          doctest::Approx(1000.0 / 12.0).epsilon(1e-12));
    // The best window hangs off the left edge: "cd" is a prefix window of length 2.
    CHECK(sim::partial_ratio(U"abcd", U"cdxxxxxx") == doctest::Approx(400.0 / 6.0).epsilon(1e-12));
    // ... and off the right edge.
    CHECK(sim::partial_ratio(U"abcd", U"xxxxxxab") == doctest::Approx(400.0 / 6.0).epsilon(1e-12));
    // Equal lengths try both strings as the needle.
    CHECK(sim::partial_ratio(U"xab", U"abx") == doctest::Approx(80.0).epsilon(1e-12));
    CHECK(sim::partial_ratio(U"", U"") == 100.0);
    CHECK(sim::partial_ratio(U"", U"abc") == 0.0);
  }

  TEST_CASE("similarity: partial_ratio equals the every-window reference") {
    string_source source(31337);
    for (int round = 0; round < 600; ++round) {
      const auto alphabet = round % 2 == 0 ? small_alphabet : wide_alphabet;
      const std::size_t la = source.below(round < 500 ? 40 : 150);
      const std::size_t lb = round % 4 == 0 ? la : source.below(round < 500 ? 120 : 400);
      const std::u32string a = source.random(la, alphabet);
      const std::u32string b = round % 3 == 0 ? source.mutate(a, source.below(6), alphabet)
                                              : source.random(lb, alphabet);
      CAPTURE(loopguard::utf8::encode(a));
      CAPTURE(loopguard::utf8::encode(b));
      REQUIRE(sim::partial_ratio(a, b) == doctest::Approx(reference_partial(a, b)).epsilon(1e-12));
    }
  }

  TEST_CASE("similarity: token_sort_ratio ignores token order and whitespace runs") {
    CHECK(sim::token_sort_ratio(U"fuzzy wuzzy was a bear", U"wuzzy fuzzy was a bear") == 100.0);
    CHECK(sim::token_sort_ratio(U"  b\ta\u3000c ", U"a b c") == 100.0);
    CHECK(sim::token_sort_ratio(U"", U"") == 100.0);
    CHECK(sim::token_sort_ratio(U"b a", U"a c") == doctest::Approx(sim::ratio(U"a b", U"a c")));
  }

  TEST_CASE("similarity: tokens sort by UTF-16 code units, as JavaScript sorts them") {
    using loopguard::similarity::detail::utf16_less;
    // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FF21 although it is the larger code
    // point; below U+D800 the orders agree.
    CHECK(utf16_less(U"\U0001F600", U"\uFF21"));
    CHECK_FALSE(utf16_less(U"\uFF21", U"\U0001F600"));
    CHECK(utf16_less(U"\u6570", U"\U0001F600"));
    CHECK(utf16_less(U"ab", U"abc"));
    CHECK(utf16_less(U"B", U"a"));
    CHECK(sim::token_sort_ratio(U"\uFF21 \U0001F600", U"\U0001F600 \uFF21") == 100.0);
  }

  TEST_CASE("similarity: token_set_ratio scores contained token sets 100") {
    CHECK(sim::token_set_ratio(U"fuzzy was a bear", U"fuzzy fuzzy was a bear") == 100.0);
    CHECK(sim::token_set_ratio(U"fuzzy was a bear but not a dog", U"fuzzy was a bear") == 100.0);
    CHECK(sim::token_set_ratio(U"fuzzy was a bear but not a dog",
                               U"fuzzy was a bear but not a cat") ==
          doctest::Approx(1200.0 / 13.0).epsilon(1e-12));  // 92.307...
    CHECK(sim::token_set_ratio(U"", U"abc") == 0.0);
    CHECK(sim::token_set_ratio(U"  ", U"   ") == 0.0);
    CHECK(sim::token_set_ratio(U"abc", U"abd") == sim::ratio(U"abc", U"abd"));
  }

  TEST_CASE("similarity: default_process lowercases, blanks non-alphanumerics and trims") {
    CHECK(sim::default_process(U"  Hello, World!  ") == U"hello  world");
    CHECK(sim::default_process(U"\u00C9COLE \u0394\u0416 \u00DF") ==
          U"\u00E9cole \u03B4\u0436 \u00DF");
    CHECK(sim::default_process(U"ok \U0001F600 \u6570\u636E") == U"ok   \u6570\u636E");
    CHECK(sim::default_process(U"--").empty());
    CHECK(sim::default_process(U"").empty());
    CHECK(sim::ratio(sim::default_process(U"HELLO world!"), sim::default_process(U"hello WORLD")) ==
          100.0);
  }

  TEST_CASE("similarity: scorer names parse and print") {
    for (auto s : {sim::scorer::ratio, sim::scorer::partial_ratio, sim::scorer::token_sort_ratio,
                   sim::scorer::token_set_ratio}) {
      CHECK(sim::parse_scorer(sim::scorer_name(s)) == s);
    }
    CHECK_FALSE(sim::parse_scorer("WRatio").has_value());
  }
}
