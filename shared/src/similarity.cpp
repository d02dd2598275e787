#include "loopguard/similarity.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "loopguard/detail/lcs.hpp"
#include "loopguard/detail/tokens.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::similarity {
namespace {

double apply_cutoff(double score, double score_cutoff) {
  return score >= score_cutoff ? score : 0.0;
}

template <class CharT>
double ratio_of(const CharT* a, std::size_t na, const CharT* b, std::size_t nb,
                double score_cutoff) {
  const std::size_t total = na + nb;
  const std::size_t min_lcs = detail::min_lcs_for(score_cutoff, total);
  // Length-difference rejection: the LCS is at most the shorter length.
  if (min_lcs > std::min(na, nb)) return 0.0;
  const std::size_t lcs = detail::lcs(a, na, b, nb, min_lcs);
  return apply_cutoff(detail::indel_score(lcs, total), score_cutoff);
}

// Per-thread decode buffers for the UTF-8 front ends: no allocation once warmed up.
struct decoded_pair {
  std::u32string a;
  std::u32string b;
};

const decoded_pair& decode_pair(std::string_view a, std::string_view b) {
  thread_local decoded_pair buffers;
  buffers.a.clear();
  buffers.b.clear();
  utf8::decode_append(a, buffers.a);
  utf8::decode_append(b, buffers.b);
  return buffers;
}

// Per-thread token buffers of the token_* scorers: no allocation once warmed up.
template <class CharT>
struct token_buffers {
  detail::token_list<CharT> a;
  detail::token_list<CharT> b;
  detail::token_list<CharT> common;
  detail::token_list<CharT> only_a;
  detail::token_list<CharT> only_b;
  std::vector<std::uint32_t> scratch;
  std::basic_string<CharT> joined_a;
  std::basic_string<CharT> joined_b;
};

template <class CharT>
token_buffers<CharT>& tokens_of_thread() {
  thread_local token_buffers<CharT> buffers;
  return buffers;
}

template <class CharT>
double token_sort_of(std::basic_string_view<CharT> a, std::basic_string_view<CharT> b,
                     double score_cutoff) {
  auto& t = tokens_of_thread<CharT>();
  detail::split_tokens(a, t.a);
  detail::split_tokens(b, t.b);
  detail::sort_tokens(t.a);
  detail::sort_tokens(t.b);
  detail::join_tokens(t.a, t.joined_a);
  detail::join_tokens(t.b, t.joined_b);
  return ratio_of(t.joined_a.data(), t.joined_a.size(), t.joined_b.data(), t.joined_b.size(),
                  score_cutoff);
}

// The sorted intersection and both sorted differences of two sorted, duplicate-free lists.
template <class CharT>
void split_sets(token_buffers<CharT>& t) {
  t.common.clear();
  t.only_a.clear();
  t.only_b.clear();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < t.a.size() && j < t.b.size()) {
    if (detail::utf16_less(t.a[i], t.b[j])) {
      t.only_a.push_back(t.a[i++]);
    } else if (detail::utf16_less(t.b[j], t.a[i])) {
      t.only_b.push_back(t.b[j++]);
    } else {
      t.common.push_back(t.a[i++]);
      ++j;
    }
  }
  t.only_a.insert(t.only_a.end(), t.a.begin() + static_cast<std::ptrdiff_t>(i), t.a.end());
  t.only_b.insert(t.only_b.end(), t.b.begin() + static_cast<std::ptrdiff_t>(j), t.b.end());
}

template <class CharT>
double token_set_of(std::basic_string_view<CharT> a, std::basic_string_view<CharT> b,
                    double score_cutoff) {
  auto& t = tokens_of_thread<CharT>();
  detail::split_tokens(a, t.a);
  detail::split_tokens(b, t.b);
  // As fuzzball and rapidfuzz: no tokens on either side scores 0.
  if (t.a.empty() || t.b.empty()) return 0.0;
  detail::sort_unique_tokens(t.a, t.scratch);
  detail::sort_unique_tokens(t.b, t.scratch);
  split_sets(t);
  // One token set contains the other: combined form == intersection.
  if (!t.common.empty() && (t.only_a.empty() || t.only_b.empty())) {
    return apply_cutoff(100.0, score_cutoff);
  }
  // Only the intersection's length matters (see below), so it is never joined.
  const std::size_t sect = detail::joined_length(t.common);
  detail::join_tokens(t.only_a, t.joined_a);
  detail::join_tokens(t.only_b, t.joined_b);
  const auto& diff_a = t.joined_a;
  const auto& diff_b = t.joined_b;
  // fuzzball compares sect, sect + " " + diff_a and sect + " " + diff_b (" " only when sect is
  // not empty). Their LCSs follow from the shared prefix: LCS(sect, sect + x) = |sect| and
  // LCS(p + x, p + y) = |p| + LCS(x, y).
  const std::size_t sep = sect == 0 ? 0 : 1;
  const std::size_t len_a = sect + sep + diff_a.size();
  const std::size_t len_b = sect + sep + diff_b.size();
  double best = 0.0;
  if (sect != 0) {
    best =
        std::max(detail::indel_score(sect, sect + len_a), detail::indel_score(sect, sect + len_b));
  }
  const std::size_t total = len_a + len_b;
  const double needed = std::max(score_cutoff, best);
  const std::size_t min_lcs = detail::min_lcs_for(needed, total);
  const std::size_t min_rest = min_lcs > sect + sep ? min_lcs - sect - sep : 0;
  if (min_lcs <= std::min(len_a, len_b)) {
    const std::size_t rest =
        detail::lcs(diff_a.data(), diff_a.size(), diff_b.data(), diff_b.size(), min_rest);
    if (min_rest == 0 || rest > 0) {
      best = std::max(best, detail::indel_score(sect + sep + rest, total));
    }
  }
  return apply_cutoff(best, score_cutoff);
}

}  // namespace

std::size_t lcs_length(std::u32string_view a, std::u32string_view b) {
  return detail::lcs(a.data(), a.size(), b.data(), b.size(), 0);
}

double ratio(std::u32string_view a, std::u32string_view b, double score_cutoff) {
  return ratio_of(a.data(), a.size(), b.data(), b.size(), score_cutoff);
}

double token_sort_ratio(std::u32string_view a, std::u32string_view b, double score_cutoff) {
  return token_sort_of(a, b, score_cutoff);
}

double token_set_ratio(std::u32string_view a, std::u32string_view b, double score_cutoff) {
  return token_set_of(a, b, score_cutoff);
}

double ratio(std::string_view a, std::string_view b, double score_cutoff) {
  if (utf8::is_ascii(a) && utf8::is_ascii(b)) {
    return ratio_of(a.data(), a.size(), b.data(), b.size(), score_cutoff);
  }
  const auto& d = decode_pair(a, b);
  return ratio(d.a, d.b, score_cutoff);
}

double partial_ratio(std::string_view a, std::string_view b, double score_cutoff) {
  const auto& d = decode_pair(a, b);
  return partial_ratio(d.a, d.b, score_cutoff);
}

double token_sort_ratio(std::string_view a, std::string_view b, double score_cutoff) {
  if (utf8::is_ascii(a) && utf8::is_ascii(b)) return token_sort_of(a, b, score_cutoff);
  const auto& d = decode_pair(a, b);
  return token_sort_ratio(d.a, d.b, score_cutoff);
}

double token_set_ratio(std::string_view a, std::string_view b, double score_cutoff) {
  if (utf8::is_ascii(a) && utf8::is_ascii(b)) return token_set_of(a, b, score_cutoff);
  const auto& d = decode_pair(a, b);
  return token_set_ratio(d.a, d.b, score_cutoff);
}

std::optional<scorer> parse_scorer(std::string_view name) {
  for (scorer s :
       {scorer::ratio, scorer::partial_ratio, scorer::token_sort_ratio, scorer::token_set_ratio}) {
    if (name == scorer_name(s)) return s;
  }
  return std::nullopt;
}

std::string_view scorer_name(scorer s) {
  switch (s) {
    case scorer::ratio:
      return "ratio";
    case scorer::partial_ratio:
      return "partial_ratio";
    case scorer::token_sort_ratio:
      return "token_sort_ratio";
    case scorer::token_set_ratio:
      return "token_set_ratio";
  }
  return "ratio";
}

double score(scorer s, std::u32string_view a, std::u32string_view b, double score_cutoff) {
  switch (s) {
    case scorer::ratio:
      return ratio(a, b, score_cutoff);
    case scorer::partial_ratio:
      return partial_ratio(a, b, score_cutoff);
    case scorer::token_sort_ratio:
      return token_sort_ratio(a, b, score_cutoff);
    case scorer::token_set_ratio:
      return token_set_ratio(a, b, score_cutoff);
  }
  return 0.0;
}

cached_ratio::cached_ratio(std::u32string_view s) : s_(s) {
  bits_.assign(s_.data(), s_.size());
}

cached_ratio::cached_ratio(std::string_view utf8) : cached_ratio(utf8::decode(utf8)) {}

double cached_ratio::similarity(std::u32string_view other, double score_cutoff) const {
  const std::size_t total = s_.size() + other.size();
  const std::size_t min_lcs = detail::min_lcs_for(score_cutoff, total);
  if (min_lcs > std::min(s_.size(), other.size())) return 0.0;
  const std::size_t lcs =
      bits_.words() == 1
          ? detail::lcs_short_with(bits_, s_.data(), other.data(), other.size(), min_lcs)
          : detail::lcs_with(bits_, other.data(), other.size(), min_lcs);
  return apply_cutoff(detail::indel_score(lcs, total), score_cutoff);
}

double cached_ratio::similarity(std::string_view utf8_other, double score_cutoff) const {
  if (utf8::is_ascii(utf8_other)) {
    const std::size_t total = s_.size() + utf8_other.size();
    const std::size_t min_lcs = detail::min_lcs_for(score_cutoff, total);
    if (min_lcs > std::min(s_.size(), utf8_other.size())) return 0.0;
    const std::size_t lcs =
        bits_.words() == 1 ? detail::lcs_short_with(bits_, s_.data(), utf8_other.data(),
                                                    utf8_other.size(), min_lcs)
                           : detail::lcs_with(bits_, utf8_other.data(), utf8_other.size(), min_lcs);
    return apply_cutoff(detail::indel_score(lcs, total), score_cutoff);
  }
  thread_local std::u32string buffer;
  buffer.clear();
  utf8::decode_append(utf8_other, buffer);
  return similarity(std::u32string_view(buffer), score_cutoff);
}

}  // namespace loopguard::similarity
