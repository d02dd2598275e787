#include "loopguard/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace loopguard::utf8 {
namespace {

constexpr bool is_continuation(unsigned char b) {
  return (b & 0xC0U) == 0x80U;
}

// Decodes the sequence starting at s[i] (a non-ASCII lead byte). Returns the code point, or
// U+FFFD, and advances i past the maximal subpart consumed (at least one byte).
char32_t decode_one(std::string_view s, std::size_t& i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  ++i;
  std::size_t length = 0;
  char32_t cp = 0;
  // The valid range of the second byte depends on the lead (Unicode Table 3-7): it is what
  // rules out overlong forms, surrogates and values above U+10FFFF.
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1FU;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0FU;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07U;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return replacement_character;  // continuation byte, C0, C1 or F5..FF
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (i >= s.size()) return replacement_character;
    const auto b = static_cast<unsigned char>(s[i]);
    const bool ok = k == 1 ? (b >= lo && b <= hi) : is_continuation(b);
    if (!ok) return replacement_character;  // b is not consumed: it starts the next sequence
    cp = (cp << 6) | (b & 0x3FU);
    ++i;
  }
  return cp;
}

}  // namespace

bool is_ascii(std::string_view s) {
  std::size_t i = 0;
  constexpr std::uint64_t high_bits = 0x8080808080808080ULL;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, s.data() + i, sizeof word);
    if ((word & high_bits) != 0) return false;
  }
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0x80U) != 0) return false;
  }
  return true;
}

void decode_append(std::string_view s, std::u32string& out) {
  out.reserve(out.size() + s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out.push_back(b);
      ++i;
    } else {
      out.push_back(decode_one(s, i));
    }
  }
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  decode_append(s, out);
  return out;
}

void encode_append(std::u32string_view s, std::string& out) {
  out.reserve(out.size() + s.size());
  for (char32_t cp : s) {
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = replacement_character;
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0U | (cp >> 6)));
      out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0U | (cp >> 12)));
      out.push_back(static_cast<char>(0x80U | ((cp >> 6) & 0x3FU)));
      out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    } else {
      out.push_back(static_cast<char>(0xF0U | (cp >> 18)));
      out.push_back(static_cast<char>(0x80U | ((cp >> 12) & 0x3FU)));
      out.push_back(static_cast<char>(0x80U | ((cp >> 6) & 0x3FU)));
      out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    }
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  encode_append(s, out);
  return out;
}

}  // namespace loopguard::utf8
