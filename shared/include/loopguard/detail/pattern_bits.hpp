// Pattern-match bit vectors (the "Peq" table of Myers / Hyyro bit-parallel algorithms): for a
// pattern p and a code point c, row(c) is a bit string of |p| bits, 64 per word, in which bit i is
// set iff p[i] == c. Code points below 256 live in a flat table; the others in an
// open-addressing hash map that hands out dense row indices.
//
// Internal to the similarity module. Not thread-safe to mutate; const access is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loopguard::similarity::detail {

inline constexpr std::size_t word_bits = 64;
constexpr std::size_t words_for(std::size_t n) {
  return (n + word_bits - 1) / word_bits;
}

// The code point a text element stands for. Byte strings reach the kernels only when they are
// pure ASCII, so a byte is its own code point.
constexpr char32_t code_point(char c) {
  return static_cast<unsigned char>(c);
}
constexpr char32_t code_point(char32_t c) {
  return c;
}

// Map from code points >= 256 to dense indices 1..size() (0 means absent). Linear probing over
// a power-of-two table kept at most half full.
class code_point_index {
 public:
  void clear();
  std::uint32_t find(char32_t c) const;
  // The index of c, inserting it with index size() + 1 when absent.
  std::uint32_t insert(char32_t c);
  std::uint32_t size() const { return size_; }

 private:
  static constexpr std::size_t initial_capacity = 64;
  static constexpr char32_t empty_key = 0;  // 0 < 256 is never stored here
  std::size_t slot(char32_t c) const;
  void grow();

  std::vector<char32_t> keys_;
  std::vector<std::uint32_t> values_;
  std::uint32_t size_ = 0;
};

class pattern_bits {
 public:
  static constexpr std::size_t flat_size = 256;

  // Rebuilds the table for `pattern`, reusing the storage of a previous pattern.
  template <class CharT>
  void assign(const CharT* pattern, std::size_t n);

  std::size_t size() const { return size_; }
  std::size_t words() const { return words_; }

  // The words() words of c's row (all zero when c is not in the pattern). Valid until the next
  // assign().
  const std::uint64_t* row(char32_t c) const {
    if (c < flat_size) return &rows_[flat_row_[c] * words_];
    const std::uint32_t e = index_.find(c);
    return &rows_[(e == 0 ? 0 : flat_rows_ + e) * words_];
  }
  // c's row when words() == 1 (at most 64 code points): one load from a direct table for code
  // points below 256, the hash map for the others.
  std::uint64_t single_word(char32_t c) const {
    if (c < flat_size) return single_rows_[c];
    const std::uint32_t e = index_.find(c);
    return e == 0 ? 0 : rows_[flat_rows_ + e];
  }

 private:
  // Only the rows of code points that occur are stored (row 0 is all zero), so building the
  // table for a long pattern costs its distinct characters, not 256 rows of every word.
  std::size_t size_ = 0;
  std::size_t words_ = 0;
  std::uint32_t flat_row_[flat_size] = {};  // row of each code point below 256; 0 = absent
  std::uint32_t flat_rows_ = 0;             // rows 1..flat_rows_ belong to those code points
  std::vector<unsigned char> used_flat_;    // code points below 256 set by the current pattern
  code_point_index index_;                  // the others: row flat_rows_ + index
  std::vector<std::uint64_t> rows_;
  // When words_ == 1: the row of every code point below 256 itself (0 when absent), so that the
  // single-word scans read it without going through flat_row_. Unused otherwise.
  std::uint64_t single_rows_[flat_size] = {};
};

extern template void pattern_bits::assign(const char*, std::size_t);
extern template void pattern_bits::assign(const char32_t*, std::size_t);

}  // namespace loopguard::similarity::detail
