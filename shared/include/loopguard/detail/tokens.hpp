// Whitespace tokenization and token ordering for the token_* scorers, matching fuzzball (the
// JavaScript reference): tokens are the maximal runs of non-whitespace, whitespace being exactly
// JavaScript's \s, and tokens sort as JavaScript's default Array.prototype.sort sorts strings, by
// UTF-16 code units.
//
// Everything works on code points (char32_t) or on pure-ASCII bytes (char; the UTF-8 front ends
// take that path only when both inputs are ASCII, where UTF-16 order is byte order). Results go
// into caller-owned vectors and strings so that buffers can be reused between calls.
//
// Internal to the similarity module.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/detail/pattern_bits.hpp"

namespace loopguard::similarity::detail {

// JavaScript's \s: TAB..CR, SPACE, NBSP, OGHAM SPACE MARK, EN QUAD..HAIR SPACE, LINE SEPARATOR,
// PARAGRAPH SEPARATOR, NARROW NBSP, MEDIUM MATHEMATICAL SPACE, IDEOGRAPHIC SPACE, BOM.
constexpr bool is_js_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000 || c == 0xFEFF;
}

template <class CharT>
using token_list = std::vector<std::basic_string_view<CharT>>;

// Replaces `out` with the tokens of s (views into s), in order of appearance.
template <class CharT>
void split_tokens(std::basic_string_view<CharT> s, token_list<CharT>& out);

// Strict weak order of strings by their UTF-16 encodings (code points above U+FFFF, written as
// surrogates D800..DFFF, sort before U+E000..U+FFFF). Two strings are equivalent only when equal.
bool utf16_less(std::u32string_view a, std::u32string_view b);
// Pure-ASCII tokens: UTF-16 order is byte order.
inline bool utf16_less(std::string_view a, std::string_view b) {
  return a < b;
}

// Sorts by utf16_less.
template <class CharT>
void sort_tokens(token_list<CharT>& tokens);

// Sorts by utf16_less and drops duplicates. Long lists drop duplicates first with a hash set
// (`scratch` is its reused table), so only the distinct tokens are sorted; the result is the same
// as sorting and then dropping adjacent duplicates, since only equal tokens are equivalent.
template <class CharT>
void sort_unique_tokens(token_list<CharT>& tokens, std::vector<std::uint32_t>& scratch);

// Replaces `out` with the tokens joined by single spaces.
template <class CharT>
void join_tokens(const token_list<CharT>& tokens, std::basic_string<CharT>& out);

// The length join_tokens would produce.
template <class CharT>
std::size_t joined_length(const token_list<CharT>& tokens);

extern template void split_tokens(std::string_view, token_list<char>&);
extern template void split_tokens(std::u32string_view, token_list<char32_t>&);
extern template void sort_tokens(token_list<char>&);
extern template void sort_tokens(token_list<char32_t>&);
extern template void sort_unique_tokens(token_list<char>&, std::vector<std::uint32_t>&);
extern template void sort_unique_tokens(token_list<char32_t>&, std::vector<std::uint32_t>&);
extern template void join_tokens(const token_list<char>&, std::string&);
extern template void join_tokens(const token_list<char32_t>&, std::u32string&);
extern template std::size_t joined_length(const token_list<char>&);
extern template std::size_t joined_length(const token_list<char32_t>&);

}  // namespace loopguard::similarity::detail
