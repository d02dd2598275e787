// partial_ratio: the exact best alignment of the shorter string against the longer one.
//
// With needle s1 (length m) and haystack s2 (length n >= m), the candidates are, as in
// rapidfuzz, every window of s2 that the needle can be laid over:
//   prefixes  s2[0, i)      for i in 1..m-1,
//   windows   s2[i, i + m)  for i in 0..n-m,
//   suffixes  s2[i, n)      for i in n-m+1..n-1,
// and the score is the best ratio(s1, window). When m == n the roles are also swapped.
//
// All prefixes come out of one bit-parallel scan (the LCS after each text character is the
// LCS with that prefix), all suffixes out of one scan of both strings reversed. The full-length
// windows are filtered: a window is scanned only if (a) its last character occurs in s1
// (otherwise the window one to the left does at least as well), and (b) the multiset overlap of the
// window with s1, an upper bound on their LCS that a sliding histogram keeps up to date, could beat
// the best score so far; the scan itself is then banded by that score.
#include <algorithm>
#include <string>
#include <vector>

#include "loopguard/detail/lcs.hpp"
#include "loopguard/similarity.hpp"

namespace loopguard::similarity {
namespace {

using detail::indel_score;
using detail::pattern_bits;

// Dense ids for the code points of the needle: c for c < 256, 256 + k for the k-th other one;
// 256 itself stands for "not in the needle".
class char_ids {
 public:
  explicit char_ids(std::u32string_view needle) {
    for (char32_t c : needle) {
      if (c >= flat_size) index_.insert(c);
    }
    need_.assign(flat_size + 1 + index_.size(), 0);
    for (char32_t c : needle) ++need_[id(c)];
  }
  std::size_t id(char32_t c) const { return c < flat_size ? c : flat_size + index_.find(c); }
  std::size_t count() const { return need_.size(); }
  // How often the code point with this id occurs in the needle.
  std::uint32_t need(std::size_t id) const { return need_[id]; }

 private:
  static constexpr std::size_t flat_size = 256;
  detail::code_point_index index_;
  std::vector<std::uint32_t> need_;
};

// Best ratio of `needle` against the prefixes of `text` of length 1..limit, reading `text`
// forwards, or backwards (the suffixes) when `reversed`.
double best_edge_window(const pattern_bits& bits, const char_ids& ids, std::u32string_view text,
                        std::size_t limit, bool reversed) {
  const std::size_t m = bits.size();
  std::vector<std::uint64_t> s(bits.words(), ~std::uint64_t{0});
  double best = 0.0;
  for (std::size_t j = 0; j < limit; ++j) {
    const char32_t c = reversed ? text[text.size() - 1 - j] : text[j];
    detail::advance(s.data(), bits.row(c), 0, s.size());
    // A window ending in a character foreign to the needle does worse than one without it.
    if (ids.need(ids.id(c)) == 0) continue;
    best = std::max(best, indel_score(detail::matched(s.data(), s.size()), m + j + 1));
  }
  return best;
}

// The smallest LCS whose window score beats `best` and reaches `cutoff`, for windows of
// length m.
std::size_t min_lcs_to_beat(double best, double cutoff, std::size_t m) {
  std::size_t k = detail::min_lcs_for(best, 2 * m);
  if (k <= 2 * m && indel_score(k, 2 * m) <= best) ++k;
  return std::max(k, detail::min_lcs_for(cutoff, 2 * m));
}

double best_full_window(const pattern_bits& bits, const char_ids& ids, std::u32string_view needle,
                        std::u32string_view text, double best, double cutoff) {
  const std::size_t m = needle.size();
  const std::size_t n = text.size();
  std::vector<std::uint32_t> have(ids.count(), 0);
  std::size_t overlap = 0;  // sum over code points of min(need, have) for the current window
  auto add = [&](char32_t c) {
    const std::size_t id = ids.id(c);
    if (have[id]++ < ids.need(id)) ++overlap;
  };
  auto remove = [&](char32_t c) {
    const std::size_t id = ids.id(c);
    if (--have[id] < ids.need(id)) --overlap;
  };
  for (std::size_t j = 0; j < m; ++j) add(text[j]);
  for (std::size_t i = 0; i + m <= n; ++i) {
    if (i > 0) {
      remove(text[i - 1]);
      add(text[i + m - 1]);
    }
    if (best >= 100.0) break;
    // A window ending in a character foreign to the needle has the LCS of that window minus its
    // last character, which the window one to the left (or, for i == 0, the prefix window of
    // length m - 1) contains: it cannot do better. (The same filter on the first character as
    // well would be unsound: two overlapping windows could each defer to the other.)
    if (ids.need(ids.id(text[i + m - 1])) == 0) continue;
    const std::size_t k = min_lcs_to_beat(best, cutoff, m);
    if (overlap < k) continue;  // the LCS is at most the overlap
    const std::size_t lcs = detail::lcs_with(bits, text.data() + i, m, k);
    if (lcs >= k) best = std::max(best, indel_score(lcs, 2 * m));
  }
  return best;
}

// Best window score of needle against text (|needle| <= |text|, needle not empty). Exact when
// that score is >= cutoff; otherwise some value below cutoff.
double partial_impl(std::u32string_view needle, std::u32string_view text, double cutoff) {
  const std::size_t m = needle.size();
  const char_ids ids(needle);
  pattern_bits forward;
  forward.assign(needle.data(), m);
  double best = best_edge_window(forward, ids, text, m - 1, false);
  if (best < 100.0) {
    const std::u32string reversed(needle.rbegin(), needle.rend());
    pattern_bits backward;
    backward.assign(reversed.data(), m);
    best = std::max(best, best_edge_window(backward, ids, text, m, true));
  }
  if (best < 100.0) best = best_full_window(forward, ids, needle, text, best, cutoff);
  return best;
}

}  // namespace

double partial_ratio(std::u32string_view a, std::u32string_view b, double score_cutoff) {
  if (a.empty() || b.empty()) {
    const double score = a.size() == b.size() ? 100.0 : 0.0;
    return score >= score_cutoff ? score : 0.0;
  }
  const bool a_shorter = a.size() <= b.size();
  const std::u32string_view needle = a_shorter ? a : b;
  const std::u32string_view text = a_shorter ? b : a;
  double best = partial_impl(needle, text, score_cutoff);
  if (best < 100.0 && a.size() == b.size()) {
    best = std::max(best, partial_impl(text, needle, std::max(score_cutoff, best)));
  }
  return best >= score_cutoff ? best : 0.0;
}

}  // namespace loopguard::similarity
