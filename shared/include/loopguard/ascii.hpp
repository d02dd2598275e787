// ASCII case folding, the one way the project lowercases text it compares (tool names, shell
// words, phrases). Bytes outside A..Z are kept as they are, whatever the process's locale, so
// fingerprints and rule decisions never depend on a host application's setlocale().
#pragma once

#include <string>
#include <string_view>

namespace loopguard::ascii {

constexpr char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

}  // namespace loopguard::ascii
