#include "display_text.hpp"

#include "loopguard/utf8.hpp"

namespace loopguard::cli {
namespace {

struct range {
  char32_t lo, hi;
};

// Zero-width: combining marks, zero-width space/joiners/marks, variation selectors.
constexpr range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x2064},
    {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF}};

// Wide: Hangul Jamo, CJK, Hangul syllables, compatibility ideographs, fullwidth forms, emoji.
constexpr range kWide[] = {{0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},
                           {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
                           {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE30, 0xFE4F},
                           {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F},
                           {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD}};

template <std::size_t N>
bool in(const range (&table)[N], char32_t c) {
  for (const range& r : table) {
    if (c >= r.lo && c <= r.hi) return true;
  }
  return false;
}

std::size_t width_of(char32_t c) {
  if (in(kZeroWidth, c)) return 0;
  return in(kWide, c) ? 2 : 1;
}

bool is_control(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c < 0xA0);
}

}  // namespace

std::size_t display_width(std::string_view s) {
  if (utf8::is_ascii(s)) return s.size();
  std::size_t w = 0;
  for (const char32_t c : utf8::decode(s)) w += width_of(c);
  return w;
}

std::string fit(std::string_view s, std::size_t max_width) {
  std::u32string text = utf8::decode(s);
  for (char32_t& c : text) {
    if (is_control(c)) c = U' ';
  }
  std::size_t total = 0;
  for (const char32_t c : text) total += width_of(c);
  if (total <= max_width) return utf8::encode(text);
  if (max_width == 0) return {};
  // Keep what fits in max_width - 1 columns (zero-width marks stay with their base character),
  // then the ellipsis.
  std::size_t used = 0, keep = 0;
  while (keep < text.size() && used + width_of(text[keep]) <= max_width - 1) {
    used += width_of(text[keep]);
    ++keep;
  }
  text.resize(keep);
  text += U'\u2026';
  return utf8::encode(text);
}

}  // namespace loopguard::cli
