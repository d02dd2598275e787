#include "loopguard/shell_command.hpp"

#include <algorithm>
#include <array>
#include <regex>

namespace loopguard::shell {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// Which flags of a file-reading command take a separate value ("-n 20"); long flags written
// with '=' and short flags with an attached value ("-n20") never consume the next word.
struct reader_spec {
  std::string_view name;
  std::string_view value_short;  // short flag letters that take a value
  std::array<std::string_view, 12> value_long;
};

constexpr std::array<reader_spec, 9> kReaders{{
    {"cat", "", {}},
    {"head", "nc", {"--lines", "--bytes"}},
    {"tail", "ncs", {"--lines", "--bytes", "--sleep-interval", "--pid", "--max-unchanged-stats"}},
    {"less", "bhjkoOpPtTxyz", {"--log-file", "--tag", "--tabs", "--pattern", "--window"}},
    {"more", "n", {"--lines"}},
    {"wc", "", {"--files0-from"}},
    {"nl",
     "bdfhilnsvw",
     {"--body-numbering", "--section-delimiter", "--footer-numbering", "--header-numbering",
      "--line-increment", "--join-blank-lines", "--number-format", "--number-separator",
      "--starting-line-number", "--number-width"}},
    {"bat",
     "lmrH",
     {"--language", "--line-range", "--highlight-line", "--map-syntax", "--style", "--theme",
      "--paging", "--color", "--tabs", "--wrap", "--terminal-width", "--file-name"}},
    {"sed", "e", {"--expression", "--line-length"}},
}};

const reader_spec* find_reader(std::string_view name) {
  for (const auto& r : kReaders) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

bool takes_value(const reader_spec& r, std::string_view flag) {
  if (flag.size() == 2 && flag[0] == '-' && flag[1] != '-') {
    return r.value_short.find(flag[1]) != std::string_view::npos;
  }
  if (flag.starts_with("--") && flag.find('=') == std::string_view::npos) {
    return std::find(r.value_long.begin(), r.value_long.end(), flag) != r.value_long.end();
  }
  return false;
}

// sed scripts that only print lines: "5p", "1,20p", "$p", "10,$p".
bool is_sed_print_script(const std::string& script) {
  static const std::regex kPrint(R"(^(\d+|\$)(,(\d+|\$))?p$)");
  return std::regex_match(script, kPrint);
}

std::string clean_path(std::string p) {
  std::string out;
  out.reserve(p.size());
  for (char c : p) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  while (out.size() > 2 && out.starts_with("./")) out.erase(0, 2);
  return out;
}

std::string basename_of(const std::string& word) {
  const auto slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool is_assignment(const std::string& word) {
  const auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

}  // namespace

std::string normalize_whitespace(std::string_view command) {
  std::string out;
  out.reserve(command.size());
  char quote = 0;
  bool pending_space = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote == 0) {
      if (c == '\\' && i + 1 < command.size() && command[i + 1] == '\n') {
        pending_space = true;
        ++i;
        continue;
      }
      if (is_blank(c) || c == '\r') {
        pending_space = true;
        continue;
      }
      if (c == '\n') {
        // A newline separates commands: keep it, without the blanks around it.
        out += '\n';
        pending_space = false;
        continue;
      }
      if (pending_space && !out.empty() && out.back() != '\n') out += ' ';
      pending_space = false;
      if (c == '\\' && i + 1 < command.size()) {
        out += c;
        out += command[++i];
        continue;
      }
      if (c == '\'' || c == '"') quote = c;
      out += c;
    } else {
      out += c;
      if (quote == '"' && c == '\\' && i + 1 < command.size()) {
        out += command[++i];
      } else if (c == quote) {
        quote = 0;
      }
    }
  }
  while (!out.empty() && (out.back() == '\n' || is_blank(out.back()))) out.pop_back();
  const auto first = out.find_first_not_of("\n \t");
  return first == std::string::npos ? std::string() : out.substr(first);
}

bool is_compound(std::string_view command) {
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      continue;
    }
    if (c == '\\') {
      ++i;
      continue;
    }
    if (c == '`' || (c == '$' && i + 1 < command.size() && command[i + 1] == '(')) return true;
    if (quote == '"') {
      if (c == '"') quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      continue;
    }
    switch (c) {
      case '|':
      case ';':
      case '&':
      case '<':
      case '>':
      case '(':
      case ')':
      case '\n':
        return true;
      default:
        break;
    }
  }
  return false;
}

std::optional<std::vector<std::string>> split_words(std::string_view command) {
  if (is_compound(command)) return std::nullopt;
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < command.size() &&
                 std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos) {
        word += command[++i];
      } else if (c == '$') {
        return std::nullopt;
      } else {
        word += c;
      }
      continue;
    }
    if (is_blank(c) || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      // A backslash escapes the next character; a lone one at the very end is itself (bash).
      word += i + 1 < command.size() ? command[++i] : c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      continue;
    }
    if (std::string_view("$*?[{").find(c) != std::string_view::npos) return std::nullopt;
    word += c;
  }
  if (quote != 0) return std::nullopt;
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string command_name(std::string_view command) {
  const auto words = split_words(command);
  if (!words) {
    // Compound or not literal: the first word as written is still the best name we have.
    const std::string norm = normalize_whitespace(command);
    const auto end = norm.find_first_of(" \n;|&");
    return basename_of(norm.substr(0, end));
  }
  for (const auto& w : *words) {
    if (!is_assignment(w)) return basename_of(w);
  }
  return {};
}

namespace {

// What a reader command's words say once its options are read.
struct reader_words {
  std::vector<std::string> operands, sed_scripts;
  bool sed_quiet = false;
};

// One sed option at words[i] (i moves past a separate value). False: not a plain read
// (--in-place and friends, -i, a missing script).
bool read_sed_option(const std::vector<std::string>& words, std::size_t& i, reader_words& r) {
  const std::string& w = words[i];
  if (w == "--quiet" || w == "--silent") {
    r.sed_quiet = true;
    return true;
  }
  if (w == "--expression") {
    if (i + 1 >= words.size()) return false;
    r.sed_scripts.push_back(words[++i]);
    return true;
  }
  if (w.starts_with("--expression=")) {
    r.sed_scripts.push_back(w.substr(13));
    return true;
  }
  if (w.starts_with("--")) return false;
  // A bundle of short flags: -n, -nE, -ne SCRIPT, -e SCRIPT; -i edits in place.
  for (std::size_t k = 1; k < w.size(); ++k) {
    const char f = w[k];
    if (f == 'n') {
      r.sed_quiet = true;
    } else if (f == 'e') {
      if (k + 1 < w.size()) {
        r.sed_scripts.push_back(w.substr(k + 1));
      } else if (i + 1 < words.size()) {
        r.sed_scripts.push_back(words[++i]);
      } else {
        return false;
      }
      return true;
    } else if (std::string_view("Ersuz").find(f) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The operands and sed scripts of a reader command; nullopt when it is not a plain read.
std::optional<reader_words> read_words(const reader_spec& spec,
                                       const std::vector<std::string>& words) {
  reader_words r;
  bool options_done = false;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (options_done || w == "-" || (w.size() > 0 && w[0] != '-' && w[0] != '+')) {
      if (w == "-") return std::nullopt;  // standard input, not a file
      r.operands.push_back(w);
    } else if (w == "--") {
      options_done = true;
    } else if (spec.name == "sed") {
      if (!read_sed_option(words, i, r)) return std::nullopt;
    } else if (takes_value(spec, w)) {
      if (i + 1 >= words.size()) return std::nullopt;
      ++i;
    }
  }
  return r;
}

// sed reads a file only as `sed -n` with print-only scripts; the first operand is the script
// when no -e gave one.
bool is_sed_read(reader_words& r) {
  if (!r.sed_quiet) return false;
  if (r.sed_scripts.empty()) {
    if (r.operands.empty()) return false;
    r.sed_scripts.push_back(r.operands.front());
    r.operands.erase(r.operands.begin());
  }
  for (const auto& script : r.sed_scripts) {
    if (!is_sed_print_script(script)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> file_read_target(std::string_view command) {
  const auto words = split_words(command);
  if (!words || words->empty()) return std::nullopt;
  const reader_spec* spec = find_reader(basename_of(words->front()));
  if (spec == nullptr) return std::nullopt;
  auto r = read_words(*spec, *words);
  if (!r) return std::nullopt;
  if (spec->name == "sed" && !is_sed_read(*r)) return std::nullopt;
  // One operand that names something: `cat ''` reads no file we could name.
  if (r->operands.size() != 1 || r->operands.front().empty()) return std::nullopt;
  return clean_path(r->operands.front());
}

}  // namespace loopguard::shell
