#include "loopguard/detail/lcs.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
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
    const std::uint64_t u = s & bits.single_word(code_point(text[j]));
    s = (s + u) | (s - u);
  }
  return static_cast<std::size_t>(std::popcount(~s));
}

// Patterns of 2..unrolled_words words without a lower bound: the state lives in registers and
// the word loop is unrolled (the add-with-carry chain as in advance()).
constexpr std::size_t unrolled_words = 8;

// One word of a row: S = (S + u) | (S - u) with u = S & M, carrying in and out. Plain carry
// arithmetic, which GCC turns into add/adc with the state in registers (with the addcarryx
// builtin it spilled the sum to the stack and rebuilt the flag for every word).
inline void step(std::uint64_t& s, std::uint64_t m, std::uint64_t& carry) {
  const std::uint64_t u = s & m;
  const std::uint64_t x = s + carry;
  const std::uint64_t c1 = x < carry ? 1 : 0;
  const std::uint64_t sum = x + u;
  carry = c1 | (sum < u ? 1 : 0);
  s = sum | (s - u);
}

// The state of N words in registers; `row(c)` gives the N words of c's row.
template <std::size_t N, class Row, class CharT>
std::size_t lcs_unrolled(const Row& row, const CharT* text, std::size_t n) {
  std::array<std::uint64_t, N> s;
  s.fill(~std::uint64_t{0});
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t* m = row(code_point(text[j]));
    std::uint64_t carry = 0;
    [&]<std::size_t... W>(std::index_sequence<W...>) {
      (step(s[W], m[W], carry), ...);
    }
    (std::make_index_sequence<N>{});
  }
  return matched(s.data(), N);
}

template <class CharT>
std::size_t lcs_unrolled_any(const pattern_bits& bits, const CharT* text, std::size_t n) {
  const auto row = [&bits](char32_t c) { return bits.row(c); };
  switch (bits.words()) {
    case 2:
      return lcs_unrolled<2>(row, text, n);
    case 3:
      return lcs_unrolled<3>(row, text, n);
    case 4:
      return lcs_unrolled<4>(row, text, n);
    case 5:
      return lcs_unrolled<5>(row, text, n);
    case 6:
      return lcs_unrolled<6>(row, text, n);
    case 7:
      return lcs_unrolled<7>(row, text, n);
    default:
      return lcs_unrolled<unrolled_words>(row, text, n);
  }
}

// ASCII patterns of 2..unrolled_words words without a lower bound: a 128-row table of N words
// on the stack, built in one pass (clearing it costs less than numbering rows in a shared table).
template <std::size_t N>
std::size_t lcs_ascii_unrolled(const char* pattern, std::size_t m, const char* text,
                               std::size_t n) {
  std::array<std::uint64_t, 128 * N> table{};
  for (std::size_t w = 0; w * word_bits < m; ++w) {
    const std::size_t end = std::min(m, (w + 1) * word_bits);
    std::uint64_t bit = 1;
    for (std::size_t i = w * word_bits; i < end; ++i, bit <<= 1) {
      table[(static_cast<unsigned char>(pattern[i]) & 0x7FU) * N + w] |= bit;
    }
  }
  const auto row = [&table](char32_t c) { return &table[(c & 0x7FU) * N]; };
  return lcs_unrolled<N>(row, text, n);
}

std::size_t lcs_ascii_unrolled_any(const char* pattern, std::size_t m, const char* text,
                                   std::size_t n) {
  switch (words_for(m)) {
    case 2:
      return lcs_ascii_unrolled<2>(pattern, m, text, n);
    case 3:
      return lcs_ascii_unrolled<3>(pattern, m, text, n);
    case 4:
      return lcs_ascii_unrolled<4>(pattern, m, text, n);
    case 5:
      return lcs_ascii_unrolled<5>(pattern, m, text, n);
    case 6:
      return lcs_ascii_unrolled<6>(pattern, m, text, n);
    case 7:
      return lcs_ascii_unrolled<7>(pattern, m, text, n);
    default:
      return lcs_ascii_unrolled<unrolled_words>(pattern, m, text, n);
  }
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

// The length of the common prefix of a[0, n) and b[0, n). Bytes are compared eight at a time.
template <class CharT>
std::size_t common_prefix(const CharT* a, const CharT* b, std::size_t n) {
  std::size_t i = 0;
  if constexpr (sizeof(CharT) == 1) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x = 0;
      std::uint64_t y = 0;
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) {
        if constexpr (std::endian::native == std::endian::little) {
          return i + static_cast<std::size_t>(std::countr_zero(x ^ y)) / 8;
        } else {
          break;
        }
      }
    }
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// The length of the common suffix of the n elements before a_end and before b_end.
template <class CharT>
std::size_t common_suffix(const CharT* a_end, const CharT* b_end, std::size_t n) {
  std::size_t i = 0;
  if constexpr (sizeof(CharT) == 1) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x = 0;
      std::uint64_t y = 0;
      std::memcpy(&x, a_end - i - 8, 8);
      std::memcpy(&y, b_end - i - 8, 8);
      if (x != y) {
        if constexpr (std::endian::native == std::endian::little) {
          return i + static_cast<std::size_t>(std::countl_zero(x ^ y)) / 8;
        } else {
          break;
        }
      }
    }
  }
  while (i < n &&
         a_end[-1 - static_cast<std::ptrdiff_t>(i)] == b_end[-1 - static_cast<std::ptrdiff_t>(i)]) {
    ++i;
  }
  return i;
}

// The number of set bits, inline: without -mpopcnt std::popcount is a call into libgcc, which
// costs several ns at the end of a 64-character scan.
inline std::size_t inline_popcount(std::uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<std::size_t>((x * 0x0101010101010101ULL) >> 56);
}

// The single-word scan of text[0, n) from state s, each row ANDed with `keep`.
template <bool Masked, class CharT>
std::uint64_t scan_single_word(const pattern_bits& bits, const CharT* text, std::size_t n,
                               std::uint64_t s, std::uint64_t keep) {
  for (std::size_t j = 0; j < n; ++j) {
    std::uint64_t m = bits.single_word(code_point(text[j]));
    if constexpr (Masked) m &= keep;
    const std::uint64_t u = s & m;
    s = (s + u) | (s - u);
  }
  return s;
}

}  // namespace

template <class CharT>
std::size_t lcs_short_with(const pattern_bits& bits, const char32_t* pattern, const CharT* text,
                           std::size_t n, std::size_t min_lcs) {
  assert(bits.words() == 1);
  const std::size_t m = bits.size();
  if (min_lcs > std::min(m, n)) return 0;
  const std::size_t limit = std::min(m, n);
  std::size_t prefix = 0;
  while (prefix < limit && pattern[prefix] == code_point(text[prefix])) ++prefix;
  std::size_t suffix = 0;
  while (suffix < limit - prefix && pattern[m - 1 - suffix] == code_point(text[n - 1 - suffix])) {
    ++suffix;
  }
  std::size_t result = prefix + suffix;
  if (result < limit) {
    // After a common prefix of length p the state is S = ~0 << p (bit i of ~S is set iff
    // LCS(pattern[0, i + 1), text[0, p)) - LCS(pattern[0, i), text[0, p)) = 1, i.e. iff i < p),
    // so the scan starts there; p < 64 here. Masking the rows to pattern[0, m - suffix) makes the
    // common suffix's positions behave like positions past the end: never matched, always set.
    const std::uint64_t start = ~std::uint64_t{0} << prefix;
    const std::size_t end = m - suffix;
    const CharT* rest = text + prefix;
    const std::size_t rest_n = n - prefix - suffix;
    const std::uint64_t s =
        suffix == 0 ? scan_single_word<false>(bits, rest, rest_n, start, 0)
                    : scan_single_word<true>(bits, rest, rest_n, start,
                                             (std::uint64_t{1} << end) - 1);  // end < 64
    result = inline_popcount(~s) + suffix;
  }
  return result >= min_lcs ? result : 0;
}

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
  } else if (min_lcs == 0 && bits.words() <= unrolled_words) {
    result = lcs_unrolled_any(bits, text, n);
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
  const std::size_t prefix = common_prefix(a, b, std::min(na, nb));
  const std::size_t suffix = common_suffix(a + na, b + nb, std::min(na, nb) - prefix);
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
    // Byte strings reach here only when ASCII (see pattern_bits.hpp), so & 0x7F is a no-op.
    if (na <= word_bits) {
      rest = lcs_short_ascii(a, na, b, nb);
      return rest >= rest_min ? affix + rest : 0;
    }
    if (rest_min == 0 && na <= unrolled_words * word_bits) {
      return affix + lcs_ascii_unrolled_any(a, na, b, nb);
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
template std::size_t lcs_short_with(const pattern_bits&, const char32_t*, const char*, std::size_t,
                                    std::size_t);
template std::size_t lcs_short_with(const pattern_bits&, const char32_t*, const char32_t*,
                                    std::size_t, std::size_t);
template std::size_t lcs(const char*, std::size_t, const char*, std::size_t, std::size_t);
template std::size_t lcs(const char32_t*, std::size_t, const char32_t*, std::size_t, std::size_t);

}  // namespace loopguard::similarity::detail
