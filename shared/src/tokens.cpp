#include "loopguard/detail/tokens.hpp"

#include <algorithm>
#include <cstdint>

namespace loopguard::similarity::detail {
namespace {

// A key whose numeric order is the UTF-16 order of single code points: BMP below the
// surrogates, then the supplementary planes (their high surrogates), then U+E000..U+FFFF.
// Comparing code points by key, element by element, is comparing their UTF-16 encodings,
// because a surrogate pair never shares its first unit with a BMP character.
constexpr std::uint32_t utf16_key(char32_t c) {
  if (c < 0xD800) return c;
  if (c >= 0x10000) return 0xD800 + (c - 0x10000);
  return 0xD800 + 0x100000 + (c - 0xD800);  // D800..FFFF (lone surrogates never occur)
}

}  // namespace

std::vector<std::u32string_view> split_tokens(std::u32string_view s) {
  std::vector<std::u32string_view> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_js_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_js_space(s[i])) ++i;
    if (i > start) tokens.push_back(s.substr(start, i - start));
  }
  return tokens;
}

bool utf16_less(std::u32string_view a, std::u32string_view b) {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(),
      [](char32_t x, char32_t y) { return utf16_key(x) < utf16_key(y); });
}

void sort_tokens(std::vector<std::u32string_view>& tokens, bool unique) {
  std::sort(tokens.begin(), tokens.end(), utf16_less);
  if (unique) tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
}

std::u32string join_tokens(const std::vector<std::u32string_view>& tokens) {
  std::u32string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out.push_back(U' ');
    out.append(tokens[i]);
  }
  return out;
}

}  // namespace loopguard::similarity::detail
