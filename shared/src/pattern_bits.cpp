#include "loopguard/detail/pattern_bits.hpp"

#include <algorithm>
#include <cassert>

namespace loopguard::similarity::detail {

void code_point_index::clear() {
  if (size_ == 0 && !keys_.empty()) return;
  keys_.assign(std::max(keys_.size(), initial_capacity), empty_key);
  values_.assign(keys_.size(), 0);
  size_ = 0;
}

std::size_t code_point_index::slot(char32_t c) const {
  // Fibonacci hashing: the high bits of the product are well mixed.
  const std::size_t mask = keys_.size() - 1;
  std::size_t i = static_cast<std::size_t>((std::uint64_t{c} * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
  while (keys_[i] != empty_key && keys_[i] != c) i = (i + 1) & mask;
  return i;
}

std::uint32_t code_point_index::find(char32_t c) const {
  if (size_ == 0) return 0;
  return values_[slot(c)];
}

std::uint32_t code_point_index::insert(char32_t c) {
  assert(c != empty_key);
  if (keys_.empty()) clear();
  std::size_t i = slot(c);
  if (keys_[i] == c) return values_[i];
  if (2 * (size_ + 1) > keys_.size()) {
    grow();
    i = slot(c);
  }
  keys_[i] = c;
  values_[i] = ++size_;
  return size_;
}

void code_point_index::grow() {
  std::vector<char32_t> old_keys(keys_.size() * 2, empty_key);
  std::vector<std::uint32_t> old_values(values_.size() * 2, 0);
  old_keys.swap(keys_);
  old_values.swap(values_);
  for (std::size_t k = 0; k < old_keys.size(); ++k) {
    if (old_keys[k] == empty_key) continue;
    const std::size_t i = slot(old_keys[k]);
    keys_[i] = old_keys[k];
    values_[i] = old_values[k];
  }
}

template <class CharT>
void pattern_bits::assign(const CharT* pattern, std::size_t n) {
  // Only the entries the previous pattern set are cleared: the tables stay all zero elsewhere.
  for (unsigned char c : used_flat_) {
    flat_row_[c] = 0;
    single_rows_[c] = 0;
  }
  used_flat_.clear();
  index_.clear();
  size_ = n;
  words_ = std::max<std::size_t>(1, words_for(n));

  // Pass 1: number the distinct code points.
  flat_rows_ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char32_t c = code_point(pattern[i]);
    if (c < flat_size) {
      if (flat_row_[c] == 0) {
        flat_row_[c] = ++flat_rows_;
        used_flat_.push_back(static_cast<unsigned char>(c));
      }
    } else {
      index_.insert(c);
    }
  }
  rows_.assign((1 + flat_rows_ + index_.size()) * words_, 0);
  // Pass 2: set the bits.
  for (std::size_t i = 0; i < n; ++i) {
    const char32_t c = code_point(pattern[i]);
    const std::size_t r = c < flat_size ? flat_row_[c] : flat_rows_ + index_.find(c);
    rows_[r * words_ + i / word_bits] |= std::uint64_t{1} << (i % word_bits);
  }
  if (words_ == 1) {
    for (unsigned char c : used_flat_) single_rows_[c] = rows_[flat_row_[c]];
  }
}

template void pattern_bits::assign(const char*, std::size_t);
template void pattern_bits::assign(const char32_t*, std::size_t);

}  // namespace loopguard::similarity::detail
