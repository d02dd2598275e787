// default_process: lowercase, non-alphanumerics to spaces, trim.
//
// Letters and digits are classified without the full Unicode database: exactly for ASCII and
// Latin-1, and by block elsewhere (docs/similarity.md lists the blocks). Lowercasing covers
// ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic; other scripts pass through unchanged.
#include <algorithm>

#include "loopguard/detail/tokens.hpp"
#include "loopguard/similarity.hpp"

namespace loopguard::similarity {
namespace {

struct code_point_range {
  char32_t first;
  char32_t last;
};

// Blocks (or parts) made of punctuation, symbols, separators, combining marks, format and
// control characters: none of them is a letter or a digit.
constexpr code_point_range non_alphanumeric[] = {
    {0x0080, 0x00A9}, {0x00AB, 0x00B1}, {0x00B4, 0x00B4}, {0x00B6, 0x00B8},   {0x00BB, 0x00BB},
    {0x00BF, 0x00BF}, {0x00D7, 0x00D7}, {0x00F7, 0x00F7}, {0x02C2, 0x02C5},   {0x02D2, 0x02DF},
    {0x0300, 0x036F}, {0x0375, 0x0375}, {0x037E, 0x037E}, {0x0384, 0x0385},   {0x0387, 0x0387},
    {0x0482, 0x0489}, {0x055A, 0x055F}, {0x0589, 0x058A}, {0x05BE, 0x05BE},   {0x060C, 0x060D},
    {0x061B, 0x061F}, {0x066A, 0x066D}, {0x06D4, 0x06D4}, {0x0964, 0x0965},   {0x0E3F, 0x0E3F},
    {0x1680, 0x1680}, {0x2000, 0x206F}, {0x20A0, 0x20CF}, {0x20D0, 0x20FF},   {0x2190, 0x245F},
    {0x2500, 0x2775}, {0x2794, 0x2BFF}, {0x2E00, 0x2E7F}, {0x3000, 0x3004},   {0x3008, 0x3020},
    {0x3030, 0x3030}, {0x303D, 0x303F}, {0xFD3E, 0xFD3F}, {0xFE00, 0xFE0F},   {0xFE10, 0xFE1F},
    {0xFE30, 0xFE4F}, {0xFE50, 0xFE6F}, {0xFEFF, 0xFEFF}, {0xFF01, 0xFF0F},   {0xFF1A, 0xFF20},
    {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65}, {0xFFE0, 0xFFFF}, {0x1F000, 0x1FAFF}, {0xE0000, 0xE007F},
};

bool is_alphanumeric(char32_t c) {
  if (c < 0x80) {
    return (c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z');
  }
  const auto* end = std::end(non_alphanumeric);
  const auto* it =
      std::upper_bound(std::begin(non_alphanumeric), end, c,
                       [](char32_t x, const code_point_range& r) { return x < r.first; });
  if (it == std::begin(non_alphanumeric)) return true;
  --it;
  return c > it->last;
}

// Simple (one-to-one) lowercase mapping for the scripts listed above.
char32_t to_lower(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 0x20;
  if (c < 0xC0) return c;
  if (c <= 0xDE) return c == 0xD7 ? c : c + 0x20;  // Latin-1 capitals
  if (c == 0x130) return U'i';
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c | 1U;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1U) ? c + 1 : c;
  if (c == 0x178) return 0xFF;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x4FF)) {
    return c | 1U;
  }
  if (c == 0x4C0) return 0x4CF;
  if (c >= 0x4C1 && c <= 0x4CE) return (c & 1U) ? c + 1 : c;
  return c;
}

}  // namespace

std::u32string default_process(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (char32_t c : s) out.push_back(is_alphanumeric(c) ? to_lower(c) : U' ');
  // Trim whitespace (JavaScript's \s, as the tokenizer): the spaces written above, and
  // whitespace the classification keeps (such as U+3000) would not survive it anyway.
  const auto first =
      std::find_if(out.begin(), out.end(), [](char32_t c) { return !detail::is_js_space(c); });
  const auto last = std::find_if(out.rbegin(), out.rend(), [](char32_t c) {
                      return !detail::is_js_space(c);
                    }).base();
  if (first >= last) return {};
  return std::u32string(first, last);
}

}  // namespace loopguard::similarity
