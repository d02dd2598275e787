#include "loopguard/detail/tokens.hpp"

#include <algorithm>
#include <bit>
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

// The first units of a token as one number whose order is their UTF-16 order, with missing
// units as 0 (which sorts first, as a shorter string does): 8 bytes of ASCII, or the UTF-16
// keys (21 bits each) of 3 code points. When two keys differ, they differ first at a unit where
// either both tokens have units (ordered as utf16_less orders them) or one has ended and the
// other has a unit above 0 (the shorter sorts first); so unequal keys never contradict
// utf16_less.
std::uint64_t sort_key(std::string_view t) {
  std::uint64_t key = 0;
  const std::size_t n = std::min<std::size_t>(t.size(), 8);
  for (std::size_t i = 0; i < n; ++i) {
    key |= std::uint64_t{static_cast<unsigned char>(t[i])} << (56 - 8 * i);
  }
  return key;
}

std::uint64_t sort_key(std::u32string_view t) {
  std::uint64_t key = 0;
  const std::size_t n = std::min<std::size_t>(t.size(), 3);
  for (std::size_t i = 0; i < n; ++i) key |= std::uint64_t{utf16_key(t[i])} << (42 - 21 * i);
  return key;
}

// Space for pure-ASCII bytes: JavaScript's \s below 0x80.
constexpr bool is_space_unit(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
constexpr bool is_space_unit(char32_t c) {
  return is_js_space(c);
}

// Lists up to this long are sorted and deduplicated in place; longer ones go through the hash
// set first.
constexpr std::size_t hash_dedupe_min = 32;
constexpr std::uint32_t empty_slot = ~std::uint32_t{0};

template <class CharT>
std::uint64_t token_hash(std::basic_string_view<CharT> t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (CharT c : t) {
    h ^= static_cast<std::uint64_t>(code_point(c));
    h *= 0x100000001b3ULL;
  }
  return h ^ (h >> 29);
}

// Keeps the first occurrence of every token, in order.
template <class CharT>
void drop_duplicates(token_list<CharT>& tokens, std::vector<std::uint32_t>& table) {
  const std::size_t capacity = std::bit_ceil(2 * tokens.size());
  table.assign(capacity, empty_slot);
  const std::size_t mask = capacity - 1;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::basic_string_view<CharT> t = tokens[i];
    std::size_t slot = static_cast<std::size_t>(token_hash(t)) & mask;
    while (table[slot] != empty_slot && tokens[table[slot]] != t) slot = (slot + 1) & mask;
    if (table[slot] != empty_slot) continue;  // seen before
    table[slot] = static_cast<std::uint32_t>(kept);
    tokens[kept++] = t;
  }
  tokens.resize(kept);
}

}  // namespace

template <class CharT>
void split_tokens(std::basic_string_view<CharT> s, token_list<CharT>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space_unit(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space_unit(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
}

bool utf16_less(std::u32string_view a, std::u32string_view b) {
  // Equal code points have equal keys, so the first difference decides.
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ib == b.end()) return false;
  if (ia == a.end()) return true;
  return utf16_key(*ia) < utf16_key(*ib);
}

template <class CharT>
void sort_tokens(token_list<CharT>& tokens) {
  // Sorted by a 64-bit key of each token's first units first: unequal keys order two tokens
  // exactly as utf16_less does, and equal keys fall back to it. So the order is utf16_less's.
  struct keyed {
    std::uint64_t key;
    std::basic_string_view<CharT> token;
  };
  thread_local std::vector<keyed> buffer;
  buffer.clear();
  for (const auto& t : tokens) buffer.push_back({sort_key(t), t});
  std::sort(buffer.begin(), buffer.end(), [](const keyed& x, const keyed& y) {
    if (x.key != y.key) return x.key < y.key;
    return utf16_less(x.token, y.token);
  });
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = buffer[i].token;
}

template <class CharT>
void sort_unique_tokens(token_list<CharT>& tokens, std::vector<std::uint32_t>& scratch) {
  if (tokens.size() > hash_dedupe_min) drop_duplicates(tokens, scratch);
  sort_tokens(tokens);
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
}

template <class CharT>
void join_tokens(const token_list<CharT>& tokens, std::basic_string<CharT>& out) {
  out.clear();
  out.reserve(joined_length(tokens));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out.push_back(CharT{' '});
    out.append(tokens[i]);
  }
}

template <class CharT>
std::size_t joined_length(const token_list<CharT>& tokens) {
  std::size_t n = tokens.empty() ? 0 : tokens.size() - 1;
  for (const auto& t : tokens) n += t.size();
  return n;
}

template void split_tokens(std::string_view, token_list<char>&);
template void split_tokens(std::u32string_view, token_list<char32_t>&);
template void sort_tokens(token_list<char>&);
template void sort_tokens(token_list<char32_t>&);
template void sort_unique_tokens(token_list<char>&, std::vector<std::uint32_t>&);
template void sort_unique_tokens(token_list<char32_t>&, std::vector<std::uint32_t>&);
template void join_tokens(const token_list<char>&, std::string&);
template void join_tokens(const token_list<char32_t>&, std::u32string&);
template std::size_t joined_length(const token_list<char>&);
template std::size_t joined_length(const token_list<char32_t>&);

}  // namespace loopguard::similarity::detail
