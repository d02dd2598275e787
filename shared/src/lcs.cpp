#include "loopguard/detail/lcs.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <vector>

namespace loopguard::similarity::detail {
namespace {

// How often (in text characters) the banded scan checks whether min_lcs is still reachable.
constexpr std::size_t reachability_check_interval = 64;
// Patterns up to this many words keep their state vector on the stack.
constexpr std::size_t stack_words = 64;

template <class CharT>
std::size_t lcs_single_word(const pattern_bits& bits, const CharT* text, std::size_t n) {
  std::uint64_t s = ~std::uint64_t{0};
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t u = s & bits.word0(code_point(text[j]));
    s = (s + u) | (s - u);
  }
  return static_cast<std::size_t>(std::popcount(~s));
}

template <class CharT>
std::size_t lcs_blocks(const pattern_bits& bits, const CharT* text, std::size_t n,
                       std::size_t min_lcs, std::uint64_t* s) {
  const std::size_t m = bits.size();
  const std::size_t words = bits.words();
  std::fill_n(s, words, ~std::uint64_t{0});
  if (min_lcs == 0) {
    for (std::size_t j = 0; j < n; ++j) advance(s, bits.row(code_point(text[j])), 0, words);
    return matched(s, words);
  }
  // A match (i, j) of an LCS of length >= k has i - j <= m - k (pattern characters skipped
  // before it) and j - i <= n - k (text characters skipped), so row j only needs pattern
  // positions [j - (n - k), j + (m - k)]. Words outside the band are treated as matchless, which
  // can only lower a result that is below k anyway.
  const std::size_t k = min_lcs;
  const std::size_t left = m - k;
  const std::size_t right = n - k;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t first = j > right ? (j - right) / word_bits : 0;
    const std::size_t last = std::min(words, (j + left) / word_bits + 1);
    advance(s, bits.row(code_point(text[j])), first, last);
    if ((j + 1) % reachability_check_interval == 0) {
      // Each further text character adds at most one to the LCS.
      if (matched(s, last) + (n - j - 1) < k) return 0;
    }
  }
  return matched(s, words);
}

// The common short ASCII case without the general table: pattern (<= 64 ASCII bytes) bits in
// a 128-entry stack table, which is cheaper to clear than to reuse.
std::size_t lcs_short_ascii(const char* pattern, std::size_t m, const char* text, std::size_t n) {
  std::array<std::uint64_t, 128> bits{};
  for (std::size_t i = 0; i < m; ++i) {
    bits[static_cast<unsigned char>(pattern[i]) & 0x7FU] |= std::uint64_t{1} << i;
  }
  std::uint64_t s = ~std::uint64_t{0};
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t u = s & bits[static_cast<unsigned char>(text[j]) & 0x7FU];
    s = (s + u) | (s - u);
  }
  return static_cast<std::size_t>(std::popcount(~s));
}

// The same for code points: a flat table below 256 and, only when the pattern has other code
// points, a 128-slot linear-probing map on the stack (at most 64 keys, so at most half full).
class short_pattern {
 public:
  short_pattern(const char32_t* pattern, std::size_t m) {
    for (std::size_t i = 0; i < m; ++i) {
      const char32_t c = pattern[i];
      const std::uint64_t bit = std::uint64_t{1} << i;
      if (c < flat_.size()) {
        flat_[c] |= bit;
        continue;
      }
      if (!extended_) {
        extended_ = true;
        keys_.fill(0);
        values_.fill(0);
      }
      const std::size_t slot = find(c);
      keys_[slot] = c;
      values_[slot] |= bit;
    }
  }
  std::uint64_t get(char32_t c) const {
    if (c < flat_.size()) return flat_[c];
    return extended_ ? values_[find(c)] : 0;
  }

 private:
  static constexpr std::size_t slots = 128;
  std::size_t find(char32_t c) const {
    std::size_t i = (std::uint64_t{c} * 0x9E3779B97F4A7C15ULL) >> 57;  // top 7 bits
    while (keys_[i] != 0 && keys_[i] != c) i = (i + 1) % slots;
    return i;
  }
  std::array<std::uint64_t, 256> flat_{};
  bool extended_ = false;
  std::array<char32_t, slots> keys_;  // 0 = empty: 0 < 256 is never stored here
  std::array<std::uint64_t, slots> values_;
};

std::size_t lcs_short_wide(const char32_t* pattern, std::size_t m, const char32_t* text,
                           std::size_t n) {
  const short_pattern bits(pattern, m);
  std::uint64_t s = ~std::uint64_t{0};
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t u = s & bits.get(text[j]);
    s = (s + u) | (s - u);
  }
  return static_cast<std::size_t>(std::popcount(~s));
}

}  // namespace

std::size_t min_lcs_for(double score_cutoff, std::size_t total) {
  if (score_cutoff <= 0) return 0;
  if (total == 0) return score_cutoff <= 100.0 ? 0 : 1;
  auto k = static_cast<std::size_t>(
      std::max(0.0, std::floor(score_cutoff * static_cast<double>(total) / 200.0)));
  k = std::min(k, total + 1);
  // Settle on the exact comparison the scorers make, whatever the rounding above did.
  while (k > 0 && indel_score(k - 1, total) >= score_cutoff) --k;
  while (k <= total && indel_score(k, total) < score_cutoff) ++k;
  return k;
}

template <class CharT>
std::size_t lcs_with(const pattern_bits& bits, const CharT* text, std::size_t n,
                     std::size_t min_lcs) {
  const std::size_t m = bits.size();
  if (min_lcs > std::min(m, n)) return 0;
  if (m == 0 || n == 0) return 0;
  std::size_t result = 0;
  if (bits.words() == 1) {
    result = lcs_single_word(bits, text, n);
  } else if (bits.words() <= stack_words) {
    std::array<std::uint64_t, stack_words> s;
    result = lcs_blocks(bits, text, n, min_lcs, s.data());
  } else {
    std::vector<std::uint64_t> s(bits.words());
    result = lcs_blocks(bits, text, n, min_lcs, s.data());
  }
  return result >= min_lcs ? result : 0;
}

template <class CharT>
std::size_t lcs(const CharT* a, std::size_t na, const CharT* b, std::size_t nb,
                std::size_t min_lcs) {
  if (min_lcs > std::min(na, nb)) return 0;
  // A common prefix or suffix is always part of some LCS.
  std::size_t prefix = 0;
  while (prefix < na && prefix < nb && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < na - prefix && suffix < nb - prefix && a[na - 1 - suffix] == b[nb - 1 - suffix]) {
    ++suffix;
  }
  const std::size_t affix = prefix + suffix;
  a += prefix;
  b += prefix;
  na -= affix;
  nb -= affix;
  if (na == 0 || nb == 0) return affix >= min_lcs ? affix : 0;
  if (na > nb) {
    std::swap(a, b);
    std::swap(na, nb);
  }
  const std::size_t rest_min = min_lcs > affix ? min_lcs - affix : 0;
  std::size_t rest = 0;
  if constexpr (sizeof(CharT) == 1) {
    if (na <= word_bits) {
      // Byte strings reach here only when ASCII (see pattern_bits.hpp), so & 0x7F is a no-op.
      rest = lcs_short_ascii(a, na, b, nb);
      return rest >= rest_min ? affix + rest : 0;
    }
  } else {
    if (na <= word_bits) {
      rest = lcs_short_wide(a, na, b, nb);
      return rest >= rest_min ? affix + rest : 0;
    }
  }
  thread_local pattern_bits bits;
  bits.assign(a, na);
  rest = lcs_with(bits, b, nb, rest_min);
  if (rest_min > 0 && rest == 0) return 0;
  return affix + rest;
}

template std::size_t lcs_with(const pattern_bits&, const char*, std::size_t, std::size_t);
template std::size_t lcs_with(const pattern_bits&, const char32_t*, std::size_t, std::size_t);
template std::size_t lcs(const char*, std::size_t, const char*, std::size_t, std::size_t);
template std::size_t lcs(const char32_t*, std::size_t, const char32_t*, std::size_t, std::size_t);

}  // namespace loopguard::similarity::detail
