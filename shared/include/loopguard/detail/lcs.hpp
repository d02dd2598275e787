// Bit-parallel longest common subsequence (Hyyro 2004, in the form rapidfuzz uses): one machine
// word holds 64 pattern positions, each text character costs one add, and, or, sub per word.
// With a lower bound on the LCS that matters (min_lcs), only a diagonal band of words can hold
// matches of an LCS that long, so only those are computed, and the scan gives up as soon as the
// bound is out of reach.
//
// Internal to the similarity module.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "loopguard/detail/pattern_bits.hpp"

namespace loopguard::similarity::detail {

// One row of the multi-word scan over words [first, last): S = (S + u) | (S - u) with
// u = S & M, the addition carrying from word to word.
inline void advance(std::uint64_t* s, const std::uint64_t* m, std::size_t first, std::size_t last) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // add-with-carry: the carry chain is the critical path, one adc per word.
  unsigned char carry = 0;
  for (std::size_t w = first; w < last; ++w) {
    const std::uint64_t sw = s[w];
    const std::uint64_t u = sw & m[w];
    unsigned long long sum = 0;
    carry = __builtin_ia32_addcarryx_u64(carry, sw, u, &sum);
    s[w] = sum | (sw - u);
  }
#else
  std::uint64_t carry = 0;
  for (std::size_t w = first; w < last; ++w) {
    const std::uint64_t sw = s[w];
    const std::uint64_t u = sw & m[w];
    const std::uint64_t sum1 = sw + carry;
    const std::uint64_t sum = sum1 + u;
    carry = static_cast<std::uint64_t>(sum1 < sw) | static_cast<std::uint64_t>(sum < u);
    s[w] = sum | (sw - u);
  }
#endif
}

// The LCS so far, from the first `words` words of S: ~S has one bit per matched pattern
// position, and bits past the end of the pattern stay set in S.
inline std::size_t matched(const std::uint64_t* s, std::size_t words) {
  std::size_t total = 0;
  for (std::size_t w = 0; w < words; ++w) total += static_cast<std::size_t>(std::popcount(~s[w]));
  return total;
}

// LCS of the pattern held by `bits` and text[0, n).
// Contract: when min_lcs == 0 the exact LCS is returned. Otherwise the exact LCS is returned if
// it is >= min_lcs, and 0 if it is below (the scan may stop early).
template <class CharT>
std::size_t lcs_with(const pattern_bits& bits, const CharT* text, std::size_t n,
                     std::size_t min_lcs);

// lcs_with for a pattern of at most 64 code points (bits.words() == 1) whose code points are
// also given (pattern[0, bits.size())): the common prefix and suffix of pattern and text are
// compared, not scanned. Same min_lcs contract; the same LCS as lcs_with.
template <class CharT>
std::size_t lcs_short_with(const pattern_bits& bits, const char32_t* pattern, const CharT* text,
                           std::size_t n, std::size_t min_lcs);

// LCS of a and b, same min_lcs contract. Strips the common prefix and suffix, then runs the
// bit-parallel scan with the shorter rest as the pattern (a per-thread table is reused, so no
// allocation once warmed up).
template <class CharT>
std::size_t lcs(const CharT* a, std::size_t na, const CharT* b, std::size_t nb,
                std::size_t min_lcs);

// The normalized Indel similarity from an LCS: 200 * lcs / total, and 100 when total == 0.
inline double indel_score(std::size_t lcs_length, std::size_t total) {
  if (total == 0) return 100.0;
  return 200.0 * static_cast<double>(lcs_length) / static_cast<double>(total);
}

// The smallest lcs with indel_score(lcs, total) >= score_cutoff (so the cutoff decision is the
// very comparison the scorers make); total + 1 when none (cutoff above 100).
std::size_t min_lcs_for(double score_cutoff, std::size_t total);

extern template std::size_t lcs_with(const pattern_bits&, const char*, std::size_t, std::size_t);
extern template std::size_t lcs_with(const pattern_bits&, const char32_t*, std::size_t,
                                     std::size_t);
extern template std::size_t lcs_short_with(const pattern_bits&, const char32_t*, const char*,
                                           std::size_t, std::size_t);
extern template std::size_t lcs_short_with(const pattern_bits&, const char32_t*, const char32_t*,
                                           std::size_t, std::size_t);
extern template std::size_t lcs(const char*, std::size_t, const char*, std::size_t, std::size_t);
extern template std::size_t lcs(const char32_t*, std::size_t, const char32_t*, std::size_t,
                                std::size_t);

}  // namespace loopguard::similarity::detail
