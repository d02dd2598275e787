#include "intent.hpp"

#include "loopguard/ascii.hpp"

namespace loopguard::sdk {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

using ascii::lower;

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Calls `visit` with the lines of `text` from the last to the first until it returns false.
template <class F>
void each_line_backwards(std::string_view text, F visit) {
  std::size_t end = text.size();
  for (;;) {
    const std::size_t nl = end == 0 ? std::string_view::npos : text.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    if (!visit(text.substr(begin, end - begin)) || nl == std::string_view::npos) return;
    end = nl;
  }
}

std::string_view first_words(std::string_view s, std::size_t words) {
  std::size_t spaces = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ' && ++spaces == words) return s.substr(0, i);
  }
  return s;
}

bool near_copy(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  if (shorter.size() < 12) return false;
  if (longer.starts_with(shorter) &&
      static_cast<double>(shorter.size()) / static_cast<double>(longer.size()) >= 0.7) {
    return true;
  }
  const std::string_view stem = first_words(a, 6);
  return stem.size() >= 16 && stem == first_words(b, 6);
}

bool is_token_line(std::string_view s) {
  if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  std::size_t i = 1;
  while (i < s.size() && (is_word_char(s[i]) || s[i] == '-')) ++i;
  if (i > 25) return false;
  if (i < s.size() && (s[i] == '.' || s[i] == '!')) ++i;
  return i == s.size();
}

}  // namespace

std::string normalize_intent_line(std::string_view line) {
  std::string out;
  bool blank = false;
  for (char c : trim(line)) {
    if (is_blank(c)) {
      blank = true;
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += lower(c);
  }
  for (;;) {
    if (!out.empty() && (out.back() == '.' || out.back() == '!')) {
      out.pop_back();
    } else if (out.ends_with("\xE2\x80\xA6")) {  // …
      out.resize(out.size() - 3);
    } else {
      break;
    }
  }
  return out;
}

std::uint32_t count_phrase(std::string_view text, std::string_view phrase) {
  if (phrase.empty() || text.size() < phrase.size()) return 0;
  std::uint32_t n = 0;
  for (std::size_t i = 0; i + phrase.size() <= text.size(); ++i) {
    if (i > 0 && is_word_char(text[i - 1])) continue;
    std::size_t k = 0;
    while (k < phrase.size() && lower(text[i + k]) == lower(phrase[k])) ++k;
    if (k < phrase.size()) continue;
    const std::size_t after = i + phrase.size();
    if (after < text.size() && is_word_char(text[after])) continue;
    ++n;
    i = after - 1;
  }
  return n;
}

std::uint32_t trailing_repeated_lines(std::string_view text) {
  std::string sample;
  std::uint32_t n = 0;
  each_line_backwards(text, [&](std::string_view raw) {
    std::string line = normalize_intent_line(raw);
    if (line.empty()) return true;
    if (n == 0) {
      if (line.size() < 8) return false;
      sample = std::move(line);
    } else if (!near_copy(line, sample)) {
      return false;
    }
    ++n;
    return true;
  });
  return n;
}

std::uint32_t trailing_token_lines(std::string_view text) {
  std::string sample;
  std::uint32_t n = 0;
  each_line_backwards(text, [&](std::string_view raw) {
    const std::string_view line = trim(raw);
    if (line.empty()) return true;
    if (n == 0) {
      if (!is_token_line(line)) return false;
      sample = normalize_intent_line(line);
    } else if (normalize_intent_line(line) != sample) {
      return false;
    }
    ++n;
    return true;
  });
  return n;
}

std::optional<finding> check_intent(std::string_view text, const intent_rule& rule,
                                    bool streaming) {
  if (!rule.enabled || text.size() < rule.min_bytes) return std::nullopt;
  const bool long_enough = text.size() >= rule.critical_min_bytes;
  struct measure {
    std::uint32_t count;
    ladder steps;
    const char* what;
  };
  const measure measures[] = {
      {trailing_repeated_lines(text),
       {rule.steps.warn_at, long_enough ? rule.steps.critical_at : 0},
       "repeated lines"},
      {count_phrase(text, rule.phrase),
       {rule.phrase_steps.warn_at, long_enough ? rule.phrase_steps.critical_at : 0},
       "phrase"},
      {trailing_token_lines(text), rule.token_steps, "one-word lines"},
  };
  // The measure that reaches the highest level; a critical one first, as upstream checks.
  const measure* best = nullptr;
  int best_level = 0;
  for (const measure& m : measures) {
    const int level = m.steps.critical_at > 0 && m.count >= m.steps.critical_at ? 2
                      : m.count >= m.steps.warn_at                              ? 1
                                                                                : 0;
    if (level > best_level) {
      best = &m;
      best_level = level;
    }
  }
  if (best == nullptr || (streaming && best_level < 2)) return std::nullopt;
  finding f;
  f.detector = detector_id::intent;
  f.identity = identity_of(fixed_loop::announced_intent);
  f.count = best->count;
  f.steps = best->steps;
  f.confidence = best_level == 2 ? 0.9 : 0.7;
  f.detail = std::string(best->what);
  if (best == &measures[1]) f.detail = "\"" + rule.phrase + "\"";
  return f;
}

}  // namespace loopguard::sdk
