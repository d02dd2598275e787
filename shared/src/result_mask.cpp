#include "loopguard/result_mask.hpp"

#include <array>
#include <cstddef>

namespace loopguard {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_word(char c) {
  return is_alpha(c) || is_digit(c) || c == '_';
}

// A cursor over the output; every matcher returns the length it matched at `pos`, or 0.
struct scanner {
  std::string_view s;

  char at(std::size_t i) const { return i < s.size() ? s[i] : '\0'; }
  bool ends_word(std::size_t i) const { return i >= s.size() || !is_word(s[i]); }

  std::size_t digits(std::size_t i, std::size_t n) const {
    for (std::size_t k = 0; k < n; ++k) {
      if (!is_digit(at(i + k))) return 0;
    }
    return n;
  }
  std::size_t hex_run(std::size_t i) const {
    std::size_t k = i;
    while (k < s.size() && is_hex(s[k])) ++k;
    return k - i;
  }

  std::size_t uuid(std::size_t i) const {
    static constexpr std::array<std::size_t, 5> kGroups{8, 4, 4, 4, 12};
    std::size_t k = i;
    for (std::size_t g = 0; g < kGroups.size(); ++g) {
      if (g > 0) {
        if (at(k) != '-') return 0;
        ++k;
      }
      if (hex_run(k) < kGroups[g]) return 0;
      k += kGroups[g];
    }
    return ends_word(k) ? k - i : 0;
  }

  // HH:MM[:SS[.frac]]; seconds required when `need_seconds`.
  std::size_t clock(std::size_t i, bool need_seconds) const {
    if (!digits(i, 2) || at(i + 2) != ':' || !digits(i + 3, 2)) return 0;
    std::size_t k = i + 5;
    if (at(k) == ':' && digits(k + 1, 2)) {
      k += 3;
      if ((at(k) == '.' || at(k) == ',') && is_digit(at(k + 1))) {
        ++k;
        while (is_digit(at(k))) ++k;
      }
    } else if (need_seconds) {
      return 0;
    }
    return k - i;
  }

  std::size_t zone(std::size_t i) const {
    if (at(i) == 'Z') return 1;
    if ((at(i) == '+' || at(i) == '-') && digits(i + 1, 2)) {
      if (at(i + 3) == ':' && digits(i + 4, 2)) return 6;
      if (digits(i + 3, 2)) return 5;
      return 3;
    }
    return 0;
  }

  std::size_t timestamp(std::size_t i) const {
    if (digits(i, 4) && at(i + 4) == '-' && digits(i + 5, 2) && at(i + 7) == '-' &&
        digits(i + 8, 2)) {
      std::size_t k = i + 10;
      if ((at(k) == 'T' || at(k) == ' ') && clock(k + 1, false) > 0) {
        k += 1 + clock(k + 1, false);
        k += zone(k);
      }
      return ends_word(k) ? k - i : 0;
    }
    const std::size_t c = clock(i, true);
    if (c == 0) return 0;
    const std::size_t k = i + c + zone(i + c);
    return ends_word(k) ? k - i : 0;
  }

  std::size_t hex_number(std::size_t i) const {
    if (at(i) == '0' && (at(i + 1) == 'x' || at(i + 1) == 'X')) {
      const std::size_t n = hex_run(i + 2);
      if (n > 0 && ends_word(i + 2 + n)) return 2 + n;
      return 0;
    }
    static constexpr std::size_t kMinHexRun = 8;
    const std::size_t n = hex_run(i);
    if (n < kMinHexRun || !ends_word(i + n)) return 0;
    for (std::size_t k = i; k < i + n; ++k) {
      if (!is_digit(s[k])) return n;  // at least one letter: an id, not a plain number
    }
    return 0;
  }

  std::size_t number(std::size_t i) const {
    std::size_t k = i;
    while (is_digit(at(k))) ++k;
    if (k == i) return 0;
    if (at(k) == '.' && is_digit(at(k + 1))) {
      ++k;
      while (is_digit(at(k))) ++k;
    }
    return k - i;
  }

  // A unit directly after a number; the longest that ends the word wins.
  std::size_t attached_unit(std::size_t i) const {
    static constexpr std::array<std::string_view, 9> kUnits{"ms", "ns", "us",  "\xc2\xb5s", "s",
                                                            "m",  "h",  "min", "sec"};
    std::size_t best = 0;
    for (std::string_view u : kUnits) {
      if (s.substr(i, u.size()) == u && u.size() > best) {
        const std::size_t end = i + u.size();
        if (ends_word(end) || is_digit(at(end))) best = u.size();
      }
    }
    return best;
  }

  std::size_t spaced_unit(std::size_t i) const {
    static constexpr std::array<std::string_view, 16> kWords{
        "ms",          "ns",           "us",  "s",    "sec",     "secs",   "seconds", "second",
        "millisecond", "milliseconds", "min", "mins", "minutes", "minute", "hours",   "hour"};
    std::size_t best = 0;
    for (std::string_view u : kWords) {
      if (s.substr(i, u.size()) == u && ends_word(i + u.size()) && u.size() > best) {
        best = u.size();
      }
    }
    return best;
  }

  // 12ms, 3.4s, 1m30s, 1h2m3.5s, 12 ms, 3 seconds.
  std::size_t duration(std::size_t i) const {
    std::size_t k = i;
    bool any = false;
    while (true) {
      const std::size_t n = number(k);
      if (n == 0) break;
      const std::size_t u = attached_unit(k + n);
      if (u == 0) break;
      k += n + u;
      any = true;
      if (ends_word(k)) return k - i;
    }
    if (any) return 0;  // 1m30x: not a duration
    const std::size_t n = number(i);
    if (n > 0 && at(i + n) == ' ') {
      const std::size_t u = spaced_unit(i + n + 1);
      if (u > 0) return n + 1 + u;
    }
    return 0;
  }

  // "pid 1234" -> length of the prefix up to the number, and the number's length.
  bool pid(std::size_t i, std::size_t& prefix, std::size_t& num) const {
    const std::string_view w = s.substr(i, 3);
    if (w != "pid" && w != "PID" && w != "Pid") return false;
    std::size_t k = i + 3;
    while (at(k) == ' ' || at(k) == ':' || at(k) == '=' || at(k) == '#') ++k;
    if (k == i + 3 && !is_digit(at(k))) return false;
    std::size_t n = 0;
    while (is_digit(at(k + n))) ++n;
    if (n == 0 || !ends_word(k + n)) return false;
    prefix = k - i;
    num = n;
    return true;
  }
};

}  // namespace

std::string mask_volatile(std::string_view output) {
  std::string out;
  const scanner sc{output};
  const std::size_t n = output.size();
  std::size_t copied = 0;  // output[0, copied) is already in `out`
  const auto replace = [&](std::size_t at, std::size_t len, std::string_view with) {
    if (out.empty()) out.reserve(n);
    out.append(output.data() + copied, at - copied);
    out.append(with);
    copied = at + len;
  };
  std::size_t i = 0;
  while (i < n) {
    if (!is_word(output[i])) {
      ++i;
      continue;
    }
    // A word starts at i. Only words that start with a digit, a hex letter or `p` can hold
    // something volatile; the rest are skipped whole without trying any matcher.
    const char c = output[i];
    std::size_t m = 0;
    if (is_digit(c)) {
      if ((m = sc.uuid(i)) > 0) {
        replace(i, m, "<uuid>");
      } else if ((m = sc.timestamp(i)) > 0) {
        replace(i, m, "<time>");
      } else if ((m = sc.hex_number(i)) > 0) {
        replace(i, m, "<hex>");
      } else if ((m = sc.duration(i)) > 0) {
        replace(i, m, "<dur>");
      }
    } else if (is_hex(c)) {
      if (sc.hex_run(i) >= 8) {
        if ((m = sc.uuid(i)) > 0) {
          replace(i, m, "<uuid>");
        } else if ((m = sc.hex_number(i)) > 0) {
          replace(i, m, "<hex>");
        }
      }
    } else if (c == 'p' || c == 'P') {
      std::size_t prefix = 0, num = 0;
      if (sc.pid(i, prefix, num)) {
        m = prefix + num;
        replace(i + prefix, num, "<pid>");
      }
    }
    if (m > 0) {
      i += m;
      continue;
    }
    while (i < n && is_word(output[i])) ++i;  // not volatile: no matcher starts inside it
  }
  if (copied == 0) return std::string(output);
  out.append(output.data() + copied, n - copied);
  return out;
}

}  // namespace loopguard
