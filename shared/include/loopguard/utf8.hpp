// UTF-8 <-> UTF-32 conversion for the similarity scorers and anything else that works on code
// points. Pure functions; no allocation beyond the returned or appended-to string.
#pragma once

#include <string>
#include <string_view>

namespace loopguard::utf8 {

// U+FFFD, which replaces every byte sequence that is not well-formed UTF-8.
inline constexpr char32_t replacement_character = 0xFFFD;

// Decodes UTF-8 into code points. Never fails and never reads past `s`: every maximal
// ill-formed subsequence (a stray continuation byte, a truncated sequence, an overlong form, an
// encoded surrogate, a value above U+10FFFF, the bytes C0, C1, F5..FF) becomes one U+FFFD, as
// the Unicode standard's "substitution of maximal subparts" recommends (and as browsers do).
std::u32string decode(std::string_view s);

// Same, appending to `out` (which is not cleared), so a caller can reuse a buffer.
void decode_append(std::string_view s, std::u32string& out);

// Encodes code points as UTF-8. Surrogates (U+D800..U+DFFF) and values above U+10FFFF, which
// are not scalar values, are written as U+FFFD.
std::string encode(std::u32string_view s);
void encode_append(std::u32string_view s, std::string& out);

// True when every byte is below 0x80, i.e. bytes and code points coincide.
bool is_ascii(std::string_view s);

}  // namespace loopguard::utf8
