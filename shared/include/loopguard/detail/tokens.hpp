// Whitespace tokenization and token ordering for the token_* scorers, matching fuzzball (the
// JavaScript reference): tokens are the maximal runs of non-whitespace, whitespace being exactly
// JavaScript's \s, and tokens sort as JavaScript's default Array.prototype.sort sorts strings, by
// UTF-16 code units.
//
// Internal to the similarity module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loopguard::similarity::detail {

// JavaScript's \s: TAB..CR, SPACE, NBSP, OGHAM SPACE MARK, EN QUAD..HAIR SPACE, LINE SEPARATOR,
// PARAGRAPH SEPARATOR, NARROW NBSP, MEDIUM MATHEMATICAL SPACE, IDEOGRAPHIC SPACE, BOM.
constexpr bool is_js_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000 || c == 0xFEFF;
}

// Views into s, in order of appearance.
std::vector<std::u32string_view> split_tokens(std::u32string_view s);

// Strict weak order of strings by their UTF-16 encodings (code points above U+FFFF, written as
// surrogates D800..DFFF, sort before U+E000..U+FFFF).
bool utf16_less(std::u32string_view a, std::u32string_view b);

// Sorts by utf16_less, optionally drops duplicates, and joins with single spaces.
void sort_tokens(std::vector<std::u32string_view>& tokens, bool unique);
std::u32string join_tokens(const std::vector<std::u32string_view>& tokens);

}  // namespace loopguard::similarity::detail
