#include "loopguard/utf8.hpp"

#include <array>
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

// Length of the well-formed sequence at s[i] (a non-ASCII lead byte), 0 when ill-formed.
std::size_t valid_length(std::string_view s, std::size_t i) {
  std::size_t j = i;
  const char32_t cp = decode_one(s, j);
  if (cp != replacement_character) return j - i;
  // decode_one answers U+FFFD for a real U+FFFD too (EF BF BD): tell the two apart.
  return j - i == 3 && s.substr(i, 3) == "\xEF\xBF\xBD" ? 3 : 0;
}

// Combining marks, variation selectors and joiners: they belong to the character before them.
constexpr bool extends_previous(char32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
         (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x20D0 && cp <= 0x20FF) ||
         (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0x200D ||
         (cp >= 0xE0100 && cp <= 0xE01EF) || (cp >= 0x1F3FB && cp <= 0x1F3FF);
}

}  // namespace

bool is_valid(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // Eight ASCII bytes at a time: most text is ASCII.
    if (std::uint64_t w = 0; s.size() - i >= sizeof w) {
      std::memcpy(&w, s.data() + i, sizeof w);
      if ((w & 0x8080808080808080ULL) == 0) {
        i += sizeof w;
        continue;
      }
    }
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = valid_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool is_identifier(std::string_view s) {
  return is_valid(s) && s.find("\xEF\xBF\xBD") == std::string_view::npos;
}

std::size_t repair_append(std::string_view s, std::string& out) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::size_t repairs = 0;
  std::size_t run = 0;  // start of the pending run of well-formed bytes
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    if (const std::size_t n = valid_length(s, i); n != 0) {
      i += n;
      continue;
    }
    out.append(s.data() + run, i - run);
    decode_one(s, i);  // skips the maximal subpart
    out += kReplacement;
    ++repairs;
    run = i;
  }
  out.append(s.data() + run, s.size() - run);
  return repairs;
}

std::string repair(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  repair_append(s, out);
  return out;
}

std::size_t repair_in_place(std::string& s) {
  if (is_valid(s)) return 0;
  std::string out;
  out.reserve(s.size() + 8);
  const std::size_t n = repair_append(s, out);
  s.swap(out);
  return n;
}

std::size_t cut_point(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  std::size_t n = max_bytes;
  while (n > 0 && is_continuation(static_cast<unsigned char>(s[n]))) --n;
  // Back off over marks that extend the character before the cut, and that character.
  constexpr int kMaxBackoff = 8;
  std::size_t m = n;
  for (int step = 0; step < kMaxBackoff && m > 0; ++step) {
    std::size_t at = m;  // the code point starting at `at` must not extend the one before it
    std::size_t j = at;
    char32_t next = 0;
    if (at < s.size()) {
      const auto b = static_cast<unsigned char>(s[at]);
      next = b < 0x80 ? char32_t{b} : decode_one(s, j);
    }
    if (!extends_previous(next)) return m;
    --m;
    while (m > 0 && is_continuation(static_cast<unsigned char>(s[m]))) --m;
  }
  return n;  // a long run of marks: cut at the code point boundary
}

std::string_view cut(std::string_view s, std::size_t max_bytes) {
  return s.substr(0, cut_point(s, max_bytes));
}

std::size_t incomplete_tail(std::string_view s) {
  const std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(s[n - back]);
    if (is_continuation(b)) continue;
    const std::size_t need = b >= 0xF0 && b <= 0xF4   ? 4
                             : b >= 0xE0 && b <= 0xEF ? 3
                             : b >= 0xC2 && b <= 0xDF ? 2
                                                      : 1;
    if (need <= back) return 0;  // complete, or not a lead byte at all
    // Only a prefix that can still become well-formed is held back.
    std::size_t i = n - back;
    std::string_view probe = s.substr(i);
    std::size_t j = 0;
    decode_one(probe, j);
    return j == back ? back : 0;  // decode_one stopped at the end, not at a bad byte
  }
  return 0;
}

std::string_view whole_code_points(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size() && b < 3 && is_continuation(static_cast<unsigned char>(s[b]))) ++b;
  s.remove_prefix(b);
  s.remove_suffix(incomplete_tail(s));
  return s;
}

bool is_ascii(std::string_view s) {
  std::size_t i = 0;
  constexpr std::uint64_t high_bits = 0x8080808080808080ULL;
  // 32 bytes per test, then 8, then single bytes.
  for (; i + 32 <= s.size(); i += 32) {
    std::array<std::uint64_t, 4> words{};
    std::memcpy(words.data(), s.data() + i, sizeof words);
    if (((words[0] | words[1] | words[2] | words[3]) & high_bits) != 0) return false;
  }
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
  // At most one code point per byte: write into the grown string, then trim it to what was
  // written (push_back per code point cost more than the decoding).
  const std::size_t start = out.size();
  out.resize(start + s.size());
  char32_t* dst = out.data() + start;
  std::size_t i = 0;
  while (i < s.size()) {
    // A run of ASCII, 8 bytes at a time.
    while (i + 8 <= s.size()) {
      std::uint64_t word = 0;
      std::memcpy(&word, s.data() + i, sizeof word);
      if ((word & 0x8080808080808080ULL) != 0) break;
      for (std::size_t k = 0; k < 8; ++k) *dst++ = static_cast<unsigned char>(s[i + k]);
      i += 8;
    }
    if (i >= s.size()) break;
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      *dst++ = b;
      ++i;
    } else {
      *dst++ = decode_one(s, i);
    }
  }
  out.resize(static_cast<std::size_t>(dst - out.data()));
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
