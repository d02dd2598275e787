#include "loopguard/similarity.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "loopguard/detail/pattern_bits.hpp"
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

// fuzzball's token_sort_ratio and token_set_ratio written out plainly on top of reference_ratio.
std::vector<std::u32string> reference_tokens(std::u32string_view s) {
  std::vector<std::u32string> out;
  std::u32string cur;
  for (char32_t c : s) {
    if (loopguard::similarity::detail::is_js_space(c)) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  std::sort(out.begin(), out.end(), [](const std::u32string& x, const std::u32string& y) {
    return loopguard::similarity::detail::utf16_less(x, y);
  });
  return out;
}

std::u32string reference_join(const std::vector<std::u32string>& tokens) {
  std::u32string out;
  for (const auto& t : tokens) {
    if (!out.empty()) out.push_back(U' ');
    out.append(t);
  }
  return out;
}

double reference_token_sort(std::u32string_view a, std::u32string_view b) {
  return reference_ratio(reference_join(reference_tokens(a)), reference_join(reference_tokens(b)));
}

double reference_token_set(std::u32string_view a, std::u32string_view b) {
  auto ta = reference_tokens(a);
  auto tb = reference_tokens(b);
  if (ta.empty() || tb.empty()) return 0.0;
  ta.erase(std::unique(ta.begin(), ta.end()), ta.end());
  tb.erase(std::unique(tb.begin(), tb.end()), tb.end());
  std::vector<std::u32string> common;
  std::vector<std::u32string> only_a;
  std::vector<std::u32string> only_b;
  for (const auto& t : ta) {
    (std::find(tb.begin(), tb.end(), t) != tb.end() ? common : only_a).push_back(t);
  }
  for (const auto& t : tb) {
    if (std::find(ta.begin(), ta.end(), t) == ta.end()) only_b.push_back(t);
  }
  // The combined form of a contained set is the intersection itself.
  if (!common.empty() && (only_a.empty() || only_b.empty())) return 100.0;
  const std::u32string sect = reference_join(common);
  const std::u32string sep = sect.empty() ? U"" : U" ";
  const std::u32string ca = sect + sep + reference_join(only_a);
  const std::u32string cb = sect + sep + reference_join(only_b);
  // A ratio with an empty side counts 0.
  const auto side_ratio = [](const std::u32string& x, const std::u32string& y) {
    return x.empty() || y.empty() ? 0.0 : reference_ratio(x, y);
  };
  return std::max({side_ratio(sect, ca), side_ratio(sect, cb), side_ratio(ca, cb)});
}

// ASCII text of whole words from a small vocabulary, words sharing long prefixes among them
// (so that sorting needs more than a token's first 8 bytes), separated by ASCII \s runs.
std::string ascii_words(string_source& source, std::size_t words) {
  static const char* const vocabulary[] = {"abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefghij",
                                           "status",   "200",       "ok",        "a",
                                           "retry",    "retrying",  "B",         "loop"};
  static const char* const separators[] = {" ", " ", " ", "  ", "\t", "\n", " \r\n "};
  std::string out;
  for (std::size_t i = 0; i < words; ++i) {
    if (i > 0 || source.below(3) == 0) out += separators[source.below(6)];
    out += vocabulary[source.below(11)];
  }
  return out;
}

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

  TEST_CASE("similarity: cached_ratio up to 64 code points skips common affixes exactly") {
    // Patterns of one word compare the common prefix and suffix instead of scanning them: every
    // split of a shared prefix, a different middle and a shared suffix, ASCII (scanned as bytes)
    // and not, must give the DP's score, ratio()'s score and the exact cutoff behaviour.
    string_source source(6464);
    const std::u32string_view ascii_alphabet = U"abc d";
    const double cutoffs[] = {0.0, 50.0, 90.0, 100.0};
    for (std::size_t m : {std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{63},
                          std::size_t{64}, std::size_t{65}}) {
      for (int round = 0; round < 40; ++round) {
        const auto alphabet = round % 2 == 0 ? ascii_alphabet : small_alphabet;
        const std::u32string a = source.random(m, alphabet);
        const std::size_t prefix = source.below(m);
        const std::size_t suffix = source.below(m - prefix);
        const std::u32string middle =
            round % 4 < 2
                ? source.mutate(a.substr(prefix, m - prefix - suffix), source.below(3), alphabet)
                : source.random(source.below(m + 3), alphabet);
        const std::u32string b = a.substr(0, prefix) + middle + a.substr(m - suffix);
        CAPTURE(loopguard::utf8::encode(a));
        CAPTURE(loopguard::utf8::encode(b));
        const double expected = sim::ratio(a, b);
        REQUIRE(expected == doctest::Approx(reference_ratio(a, b)).epsilon(1e-12));
        const sim::cached_ratio cached(a);
        const sim::cached_ratio cached8(std::string_view(loopguard::utf8::encode(a)));
        for (double cutoff : cutoffs) {
          CAPTURE(cutoff);
          const double want = expected >= cutoff ? expected : 0.0;
          REQUIRE(cached.similarity(b, cutoff) == want);
          REQUIRE(cached8.similarity(std::string_view(loopguard::utf8::encode(b)), cutoff) == want);
          // The other way round: b as the pattern (up to 67 code points).
          REQUIRE(sim::cached_ratio(b).similarity(a, cutoff) == want);
        }
      }
    }
    // Equal strings, one a prefix or suffix of the other, nothing in common.
    const sim::cached_ratio abc(std::u32string_view(U"abc"));
    CHECK(abc.similarity(std::string_view("abc")) == 100.0);
    CHECK(abc.similarity(std::string_view("ab")) == doctest::Approx(80.0).epsilon(1e-12));
    CHECK(abc.similarity(std::string_view("bc")) == doctest::Approx(80.0).epsilon(1e-12));
    CHECK(abc.similarity(std::string_view("abcabc")) ==
          doctest::Approx(600.0 / 9.0).epsilon(1e-12));
    CHECK(abc.similarity(std::string_view("xyz")) == 0.0);
    CHECK(abc.similarity(std::string_view("")) == 0.0);
  }

  TEST_CASE("similarity: a reused pattern table keeps no row of the previous pattern") {
    // assign() clears only what the previous pattern set: rows of characters that pattern used
    // must read zero once the next pattern does not use them, at one word and at several.
    sim::detail::pattern_bits bits;
    bits.assign(U"abca", 4);
    CHECK(bits.single_word(U'a') == 0b1001);
    CHECK(bits.single_word(U'c') == 0b0100);
    bits.assign(U"xa", 2);
    CHECK(bits.single_word(U'a') == 0b10);
    CHECK(bits.single_word(U'x') == 0b01);
    CHECK(bits.single_word(U'b') == 0);
    CHECK(bits.single_word(U'c') == 0);
    const std::u32string long_pattern(100, U'q');
    bits.assign(long_pattern.data(), long_pattern.size());
    CHECK(bits.words() == 2);
    CHECK(bits.row(U'x')[0] == 0);
    CHECK(bits.row(U'q')[1] == (std::uint64_t{1} << 36) - 1);
    bits.assign("b", 1);
    CHECK(bits.single_word(U'b') == 1);
    CHECK(bits.single_word(U'q') == 0);
    CHECK(bits.single_word(U'a') == 0);
    CHECK(bits.single_word(U'x') == 0);
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

  TEST_CASE("similarity: byte and code point paths agree with the reference at every width") {
    // ASCII inputs are scored as bytes (1..8 words unrolled, longer banded), others as code
    // points: both must equal the DP for patterns of 1 to 10 words.
    string_source source(1126);
    const std::u32string_view ascii_alphabet = U"abc d";
    const std::size_t widths[] = {0,   1,   63,  64,  65,  128, 129, 200, 256,
                                  257, 383, 384, 449, 511, 512, 513, 600};
    for (std::size_t la : widths) {
      for (int round = 0; round < 3; ++round) {
        const std::u32string a = source.random(la, ascii_alphabet);
        const std::u32string b = round == 2 ? source.random(source.below(700), ascii_alphabet)
                                            : source.mutate(a, 1 + la / 20, ascii_alphabet);
        const std::string a8 = loopguard::utf8::encode(a);
        const std::string b8 = loopguard::utf8::encode(b);
        CAPTURE(la);
        CAPTURE(round);
        const double expected = reference_ratio(a, b);
        REQUIRE(sim::ratio(std::string_view(a8), std::string_view(b8)) ==
                doctest::Approx(expected).epsilon(1e-12));
        REQUIRE(sim::ratio(std::string_view(a8), std::string_view(b8)) == sim::ratio(a, b));
        REQUIRE(sim::cached_ratio(std::string_view(a8)).similarity(std::string_view(b8)) ==
                sim::ratio(a, b));
        REQUIRE(sim::ratio(std::string_view(b8), std::string_view(a8), 60.0) ==
                (sim::ratio(a, b) >= 60.0 ? sim::ratio(a, b) : 0.0));
      }
    }
  }

  TEST_CASE("similarity: stripping the common prefix and suffix keeps the score") {
    // Edge cases of the affix scan (8 bytes at a time for bytes, one at a time for code points):
    // empty, all equal, one string the other's prefix or suffix, affixes that overlap, a
    // difference at each position around the 8-byte steps, and multi-byte text.
    const auto both_paths = [](std::u32string_view a, std::u32string_view b) {
      const double expected = reference_ratio(a, b);
      const std::string a8 = loopguard::utf8::encode(a);
      const std::string b8 = loopguard::utf8::encode(b);
      CAPTURE(a8);
      CAPTURE(b8);
      CHECK(sim::ratio(a, b) == doctest::Approx(expected).epsilon(1e-12));
      CHECK(sim::ratio(std::string_view(a8), std::string_view(b8)) ==
            doctest::Approx(expected).epsilon(1e-12));
      CHECK(sim::lcs_length(a, b) == reference_lcs(a, b));
    };
    both_paths(U"", U"");
    both_paths(U"", U"abcdefghijklmnopq");
    const std::size_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 64, 65, 300};
    for (std::size_t n : lengths) {
      const std::u32string same(n, U'x');
      CHECK(sim::ratio(same, same) == 100.0);
      CHECK(sim::ratio(std::string_view(loopguard::utf8::encode(same)),
                       std::string_view(loopguard::utf8::encode(same))) == 100.0);
      const std::u32string base =
          U"The quick brown fox jumps over the lazy dog, twice over." + std::u32string(n, U'.');
      both_paths(base, base.substr(0, n % base.size()));  // a prefix
      both_paths(base, base.substr(n % base.size()));     // a suffix
      for (std::size_t at = 0; at < base.size(); at += (at < 20 ? 1 : 13)) {
        std::u32string changed = base;
        changed[at] = U'#';
        both_paths(base, changed);
        std::u32string inserted = base;
        inserted.insert(inserted.begin() + static_cast<std::ptrdiff_t>(at),
                        U'\u00E9');  // multi-byte in UTF-8
        both_paths(base, inserted);
        both_paths(inserted, changed);
      }
    }
    both_paths(U"aaaa", U"aaaaaa");  // prefix and suffix overlap
    both_paths(U"abababab", U"babababa");
    both_paths(U"\u00E9t\u00E9 \u6570\u636E \U0001F600", U"\u00E9t\u00E9 \u6570 \U0001F600");
    both_paths(U"\U0001F600\U0001F600\U0001F600", U"\U0001F600\U0001F601\U0001F600");
  }

  TEST_CASE("similarity: token scorers equal the plain construction on both paths") {
    // ASCII inputs are tokenized as bytes, others as code points; long token lists are
    // deduplicated through a hash set and tokens sorted by an 8-byte key first. Vocabulary
    // words share their first 8 bytes, and lists run from 0 to 400 tokens.
    string_source source(2611);
    for (int round = 0; round < 120; ++round) {
      const std::size_t words = round < 60 ? source.below(12) : source.below(400);
      const std::string a8 = ascii_words(source, words);
      const std::string b8 = round % 4 == 0 ? ascii_words(source, source.below(words + 3))
                                            : ascii_words(source, words);
      // The same text with a multi-byte token: the code point path.
      const std::string wa8 = a8 + " \xC3\xA9t\xC3\xA9";
      const std::string wb8 = b8 + " \xF0\x9F\x98\x80";
      CAPTURE(a8);
      CAPTURE(b8);
      const auto check_pair = [](const std::string& x8, const std::string& y8) {
        const std::u32string x = loopguard::utf8::decode(x8);
        const std::u32string y = loopguard::utf8::decode(y8);
        const double sort_expected = reference_token_sort(x, y);
        const double set_expected = reference_token_set(x, y);
        REQUIRE(sim::token_sort_ratio(std::string_view(x8), std::string_view(y8)) ==
                doctest::Approx(sort_expected).epsilon(1e-12));
        REQUIRE(sim::token_sort_ratio(x, y) == doctest::Approx(sort_expected).epsilon(1e-12));
        REQUIRE(sim::token_set_ratio(std::string_view(x8), std::string_view(y8)) ==
                doctest::Approx(set_expected).epsilon(1e-12));
        REQUIRE(sim::token_set_ratio(x, y) == doctest::Approx(set_expected).epsilon(1e-12));
        // Byte and code point paths give the very same double.
        REQUIRE(sim::token_sort_ratio(std::string_view(x8), std::string_view(y8)) ==
                sim::token_sort_ratio(x, y));
        REQUIRE(sim::token_set_ratio(std::string_view(x8), std::string_view(y8)) ==
                sim::token_set_ratio(x, y));
      };
      check_pair(a8, b8);
      check_pair(wa8, wb8);
      check_pair(a8, wb8);
    }
    // Tokens equal in their first 8 bytes, and a NUL byte (not whitespace) inside a token.
    CHECK(sim::token_sort_ratio(std::string_view("abcdefghB abcdefghA"),
                                std::string_view("abcdefghA abcdefghB")) == 100.0);
    const std::string with_nul("ab\0c ab", 7);
    CHECK(sim::token_sort_ratio(std::string_view(with_nul), std::string_view("ab ab\0c", 7)) ==
          100.0);
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
