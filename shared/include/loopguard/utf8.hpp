// UTF-8: conversion to and from code points for the similarity scorers, and the one repair rule
// every string from outside goes through (docs/operations.md, "Hostile input"). Pure functions;
// no allocation beyond the returned or appended-to string.
#pragma once

#include <cstddef>
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

// True when `s` is well-formed UTF-8 (no surrogates, nothing above U+10FFFF, no overlongs).
bool is_valid(std::string_view s);

// Identifiers (swarm, worker, incarnation, message types, config keys) are refused rather than
// repaired: valid UTF-8 without U+FFFD, the mark a lossy decoder (or our repair) leaves.
bool is_identifier(std::string_view s);

// The repair rule: each maximal ill-formed subsequence becomes U+FFFD, as decode() reads it, so
// repairing is idempotent and valid text is left byte for byte. The _append form appends to
// `out` and returns how many replacements it made; repair_in_place does not allocate when `s`
// is already valid.
std::size_t repair_append(std::string_view s, std::string& out);
std::string repair(std::string_view s);
std::size_t repair_in_place(std::string& s);

// A view of `s` that is valid UTF-8: `s` itself when it is, else a repaired copy held here. For
// API boundaries that take string_views from callers.
class repaired {
 public:
  explicit repaired(std::string_view s) : view_(s) {
    if (!is_valid(s)) {
      copy_ = repair(s);
      view_ = copy_;
    }
  }
  repaired(const repaired&) = delete;
  repaired& operator=(const repaired&) = delete;
  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT: a view is what callers want

 private:
  std::string copy_;
  std::string_view view_;
};

// The longest prefix of valid UTF-8 `s` of at most `max_bytes` bytes that ends at a code point
// boundary and does not separate a base character from the combining marks, variation
// selectors or zero-width joiners that follow it (when backing off over those costs at most a
// few code points; otherwise at the code point boundary).
std::size_t cut_point(std::string_view s, std::size_t max_bytes);
// s.substr(0, cut_point(s, max_bytes)).
std::string_view cut(std::string_view s, std::size_t max_bytes);

// How many bytes at the end of `s` are the start of a sequence that more bytes could complete
// (0..3): what a byte stream cut mid-character leaves for the next piece.
std::size_t incomplete_tail(std::string_view s);
// A byte slice of valid UTF-8 trimmed to whole code points: continuation bytes at its start and
// an incomplete sequence at its end are dropped.
std::string_view whole_code_points(std::string_view s);

}  // namespace loopguard::utf8
