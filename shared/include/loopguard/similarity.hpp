// Fuzzy string similarity on Unicode code points, 0..100 as doubles.
//
// The scorers match fuzzball / rapidfuzz `fuzz.*` semantics (see docs/similarity.md), computed
// exactly with a bit-parallel LCS (Hyyro / Myers style, 64 code points per machine word).
// Every scorer takes an optional `score_cutoff`: when the true score is below it the scorer may
// stop early and returns 0. With score_cutoff == 0 the exact score is always returned.
//
// Thread-safety: free functions are pure; a `cached_ratio` is immutable after construction and
// may be shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/detail/pattern_bits.hpp"

namespace loopguard::similarity {

// Length of the longest common subsequence of a and b (code points).
std::size_t lcs_length(std::u32string_view a, std::u32string_view b);

// Normalized Indel similarity: 100 * (1 - indel_distance / (|a| + |b|)) = 200*LCS/(|a|+|b|).
// Two empty strings score 100.
double ratio(std::u32string_view a, std::u32string_view b, double score_cutoff = 0);

// Best ratio of the shorter string against every same-length (and, at the edges, shorter)
// window of the longer one: the exact definition, not the difflib block heuristic. With s the
// shorter (length m) and l the longer (length n), the windows are l[0, i) for i in 1..m-1,
// l[i, i + m) for i in 0..n-m and l[i, n) for i in n-m+1..n-1 (rapidfuzz's candidates); when
// m == n the roles are swapped as well and the better score kept. Two empty strings score 100,
// one empty string 0.
double partial_ratio(std::u32string_view a, std::u32string_view b, double score_cutoff = 0);

// ratio of the whitespace-split tokens, sorted and re-joined with single spaces. Whitespace is
// JavaScript's \s and tokens sort by UTF-16 code units, exactly as fuzzball does.
double token_sort_ratio(std::u32string_view a, std::u32string_view b, double score_cutoff = 0);

// fuzzball's token_set_ratio: the best of ratio(sorted intersection, intersection + rest of a),
// ratio(intersection, intersection + rest of b) and ratio(both combined forms). Tokens are
// deduplicated; a string without tokens scores 0 against anything.
double token_set_ratio(std::u32string_view a, std::u32string_view b, double score_cutoff = 0);

// UTF-8 front ends: decode (invalid bytes become U+FFFD) and score.
double ratio(std::string_view a, std::string_view b, double score_cutoff = 0);
double partial_ratio(std::string_view a, std::string_view b, double score_cutoff = 0);
double token_sort_ratio(std::string_view a, std::string_view b, double score_cutoff = 0);
double token_set_ratio(std::string_view a, std::string_view b, double score_cutoff = 0);

// The optional default processor: lowercase, every non-alphanumeric code point to a space,
// leading and trailing whitespace trimmed.
std::u32string default_process(std::u32string_view s);

enum class scorer { ratio, partial_ratio, token_sort_ratio, token_set_ratio };

// Parses "ratio", "partial_ratio", "token_sort_ratio" or "token_set_ratio"; nullopt otherwise.
std::optional<scorer> parse_scorer(std::string_view name);
std::string_view scorer_name(scorer s);
double score(scorer s, std::u32string_view a, std::u32string_view b, double score_cutoff = 0);

// ratio() against one fixed string, pre-processed once (pattern bit masks), for comparing it
// with many others: the output-similarity detector's hot path.
class cached_ratio {
 public:
  explicit cached_ratio(std::u32string_view s);
  explicit cached_ratio(std::string_view utf8);

  double similarity(std::u32string_view other, double score_cutoff = 0) const;
  double similarity(std::string_view utf8_other, double score_cutoff = 0) const;
  std::size_t size() const { return s_.size(); }

 private:
  std::u32string s_;
  // Pattern-match bit vectors of s_, 64 code points per word.
  detail::pattern_bits bits_;
};

}  // namespace loopguard::similarity
