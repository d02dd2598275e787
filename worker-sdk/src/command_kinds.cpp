// Which tools and commands change things, run tests, or touch files.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "command_kinds.hpp"
#include "loopguard/ascii.hpp"
#include "loopguard/shell_command.hpp"

namespace loopguard::sdk {
namespace {

bool contains_any(std::string_view haystack, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) {
    return haystack.find(n) != std::string_view::npos;
  });
}

// The delimiter of a here-document whose `<<` starts at `at` (`<<-` too, quotes removed), and
// where the operator and its word end; nullopt for `<<<` (a here-string) or no word.
std::optional<std::pair<std::string, std::size_t>> heredoc_at(std::string_view command,
                                                              std::size_t at) {
  std::size_t i = at + 2;
  if (i < command.size() && command[i] == '<') return std::nullopt;
  if (i < command.size() && command[i] == '-') ++i;
  while (i < command.size() && (command[i] == ' ' || command[i] == '\t')) ++i;
  std::string word;
  for (; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
        c == '>' || c == '(' || c == ')') {
      break;
    }
    if (c != '"' && c != '\'' && c != '\\') word += c;
  }
  if (word.empty()) return std::nullopt;
  return std::pair{word, i};
}

// Past the bodies of the here-documents `delimiters` opened on the line that ended at `at` (its
// newline): each ends at a line that is its delimiter (leading tabs allowed, as `<<-` strips).
std::size_t skip_heredocs(std::string_view command, std::size_t at,
                          const std::vector<std::string>& delimiters) {
  std::size_t line = at + 1;
  for (const std::string& d : delimiters) {
    while (line < command.size()) {
      const std::size_t end = std::min(command.find('\n', line), command.size());
      std::string_view text = command.substr(line, end - line);
      text.remove_prefix(std::min(text.find_first_not_of('\t'), text.size()));
      line = end + 1;
      if (text == d) break;
    }
  }
  return line - 1;  // on the newline that ends the last body (or past the end)
}

// Words of a command line, split on blanks and on the shell's command separators (`;`, `&`,
// `|`, parentheses, newlines), so that each simple command of `cd x && pytest -q` can be looked
// at. Separators split inside quotes too (`bash -c 'cd x && pytest'` is read), newlines only
// outside them (a quoted script's lines stay one argument). Here-document bodies are data:
// skipped.
std::vector<std::vector<std::string>> simple_commands(std::string_view command) {
  std::vector<std::vector<std::string>> out(1);
  std::string word;
  std::vector<std::string> heredocs;  // opened on the current line
  auto flush = [&] {
    if (!word.empty()) out.back().push_back(std::move(word));
    word.clear();
  };
  auto next_command = [&] {
    flush();
    if (!out.back().empty()) out.emplace_back();
  };
  char quote = 0;  // the quote a newline is inside of, if any (a script's lines are one word)
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    // The operators stay as words (`python3 <<EOF` is code on the command line), their
    // here-document delimiters do not.
    if (c == '<' && quote == 0 && command.substr(i, 3) == "<<<") {  // a here-string
      flush();
      out.back().emplace_back("<<<");
      i += 2;
      continue;
    }
    if (c == '<' && quote == 0 && i + 1 < command.size() && command[i + 1] == '<') {
      if (const auto h = heredoc_at(command, i)) {
        flush();
        out.back().emplace_back("<<");
        heredocs.push_back(h->first);
        i = h->second - 1;
        continue;
      }
    }
    if (c == '\n' && quote == 0) {
      next_command();
      if (!heredocs.empty()) i = skip_heredocs(command, i, heredocs);
      heredocs.clear();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      flush();
    } else if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      next_command();
    } else if (c == '"' || c == '\'') {
      if (quote == 0) {
        quote = c;
      } else if (quote == c && (c == '\'' || command[i - 1] != '\\')) {
        quote = 0;
      }
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

std::string base(const std::string& w) {
  const auto slash = w.rfind('/');
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

// Skips VAR=value assignments and wrappers such as `sudo`, `env`, `timeout 60`.
std::size_t command_start(const std::vector<std::string>& words) {
  std::size_t i = 0;
  while (i < words.size()) {
    const std::string& w = words[i];
    if (w.find('=') != std::string::npos && w.front() != '-') {
      ++i;
    } else if (w == "sudo" || w == "env" || w == "nice" || w == "time" || w == "exec") {
      ++i;
    } else if (w == "timeout" && i + 1 < words.size()) {
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

bool is_test_simple(const std::vector<std::string>& words) {
  const std::size_t s = command_start(words);
  if (s >= words.size()) return false;
  const std::string cmd = base(words[s]);
  const std::string next = s + 1 < words.size() ? words[s + 1] : "";
  const std::string after = s + 2 < words.size() ? words[s + 2] : "";
  static constexpr std::array<std::string_view, 14> kRunners{
      "ctest",   "pytest", "py.test", "jest",      "vitest", "mocha", "rspec",
      "phpunit", "tox",    "nox",     "nosetests", "ava",    "karma", "prove"};
  if (std::find(kRunners.begin(), kRunners.end(), cmd) != kRunners.end()) return true;
  static constexpr std::array<std::string_view, 11> kTestSub{
      "go", "cargo", "dotnet", "mvn", "gradle", "gradlew", "mix", "bun", "deno", "swift", "zig"};
  if (std::find(kTestSub.begin(), kTestSub.end(), cmd) != kTestSub.end()) {
    return next == "test" || next == "verify" || next == "nextest" || after == "test";
  }
  if (cmd == "npm" || cmd == "yarn" || cmd == "pnpm") {
    return next == "test" || next == "t" || (next == "run" && after.starts_with("test"));
  }
  if (cmd == "npx" || cmd == "bunx") return next == "jest" || next == "vitest" || next == "mocha";
  if (cmd == "make" || cmd == "ninja") {
    return std::any_of(words.begin() + static_cast<std::ptrdiff_t>(s) + 1, words.end(),
                       [](const std::string& w) { return w == "test" || w == "check"; });
  }
  if (cmd.starts_with("python")) {
    return next == "-m" && (after == "pytest" || after == "unittest" || after == "nose");
  }
  return false;
}

bool is_mutating_simple(const std::vector<std::string>& words) {
  const std::size_t s = command_start(words);
  if (s >= words.size()) return false;
  const std::string cmd = base(words[s]);
  static constexpr std::array<std::string_view, 14> kWriters{
      "mv",    "cp", "rm",    "rmdir", "touch",    "mkdir", "tee",
      "patch", "ln", "chmod", "chown", "truncate", "dd",    "install"};
  if (std::find(kWriters.begin(), kWriters.end(), cmd) != kWriters.end()) return true;
  const std::string next = s + 1 < words.size() ? words[s + 1] : "";
  if (cmd == "sed" || cmd == "perl") {
    return std::any_of(words.begin(), words.end(),
                       [](const std::string& w) { return w.starts_with("-i") || w == "-pi"; });
  }
  if (cmd == "git") {
    static constexpr std::array<std::string_view, 12> kGitWrites{
        "apply", "checkout", "commit",      "reset",   "merge",  "rebase",
        "stash", "am",       "cherry-pick", "restore", "switch", "revert"};
    return std::find(kGitWrites.begin(), kGitWrites.end(), next) != kGitWrites.end();
  }
  if (cmd == "npm" || cmd == "yarn" || cmd == "pnpm" || cmd == "pip" || cmd == "pip3" ||
      cmd == "cargo" || cmd == "go" || cmd == "apt-get" || cmd == "apt" || cmd == "uv") {
    return next == "install" || next == "add" || next == "get" || next == "i" || next == "remove" ||
           next == "uninstall";
  }
  return false;
}

// The second argument of each `open(` in `code` is a mode that writes ('w', 'a', 'x' or a '+').
bool opens_for_writing(std::string_view code) {
  for (auto p = code.find("open("); p != std::string_view::npos; p = code.find("open(", p + 1)) {
    const auto close = code.find(')', p);
    const std::string_view inside = code.substr(
        p + 5, close == std::string_view::npos ? std::string_view::npos : close - (p + 5));
    const auto comma = inside.find(',');
    if (comma == std::string_view::npos) continue;  // open(path): reading
    std::string_view mode = inside.substr(comma + 1);
    mode.remove_prefix(std::min(mode.find_first_not_of(" \t\n"), mode.size()));
    if (mode.starts_with("mode=")) mode.remove_prefix(5);
    if (mode.size() < 2 || (mode[0] != '"' && mode[0] != '\'' && mode[0] != '\\')) continue;
    if (mode[0] == '\\') mode.remove_prefix(1);  // an escaped quote inside a quoted script
    const std::string_view m = mode.substr(1, mode.find_first_of("\"'\\", 1) - 1);
    if (m.find_first_of("wax+") != std::string_view::npos) return true;
  }
  return false;
}

// Code given to an interpreter on its command line (`python3 -c '…'`, `node -e '…'`, a here
// document fed to `python3 -`) that writes files: a file opened for writing, or a write call.
bool inline_script_writes(const std::string& command,
                          const std::vector<std::vector<std::string>>& cmds) {
  const bool inline_code = std::any_of(cmds.begin(), cmds.end(), [](const auto& words) {
    const std::size_t s = command_start(words);
    if (s >= words.size()) return false;
    const std::string cmd = base(words[s]);
    if (!cmd.starts_with("python") && cmd != "node" && cmd != "ruby" && cmd != "perl") {
      return false;
    }
    return std::any_of(words.begin() + static_cast<std::ptrdiff_t>(s) + 1, words.end(),
                       [](const std::string& w) {
                         return w == "-c" || w == "-e" || w == "-" || w.starts_with("<<");
                       });
  });
  if (!inline_code) return false;
  std::string code = command;  // printing is not writing
  for (std::string_view out : {"stdout.write", "stderr.write"}) {
    for (auto p = code.find(out); p != std::string::npos; p = code.find(out)) {
      code.erase(p, out.size());
    }
  }
  return opens_for_writing(code) ||
         contains_any(
             code, {".write(", ".writelines(", "write_text(", "write_bytes(", "writeFileSync",
                    "appendFileSync", "shutil.copy", "shutil.move", "shutil.rmtree", "os.remove(",
                    "os.rename(", "os.replace(", "os.unlink("});
}

}  // namespace

bool is_mutating_tool(std::string_view tool) {
  const std::string t = ascii::lowercase(tool);
  return contains_any(t, {"write", "edit", "create", "delete", "remove", "apply", "patch",
                          "replace", "insert", "move", "rename", "update", "save", "commit",
                          "append", "upload", "install", "mkdir", "touch"});
}

bool names_read_only_command(std::string_view canonical_args) {
  // Canonical JSON is compact and escapes every quote inside a string, so `"command":"` can
  // only be a key followed by a string value.
  for (std::string_view key :
       {std::string_view(R"("command":")"), std::string_view(R"("action":")")}) {
    const auto at = canonical_args.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view value = canonical_args.substr(at + key.size());
    value = value.substr(0, std::min(value.find_first_of("\" \\"), value.size()));
    const std::string word = ascii::lowercase(value);
    for (std::string_view ro :
         {"view", "read", "show", "list", "get", "cat", "search", "find", "open", "ls"}) {
      if (word == ro) return true;
    }
  }
  return false;
}

bool is_mutating_command(std::string_view command) {
  // An output redirection writes a file (`2>&1` and `>/dev/null` do not count).
  std::string c(command);
  for (std::string_view harmless : {"2>&1", ">/dev/null", "> /dev/null", "&>/dev/null"}) {
    for (auto p = c.find(harmless); p != std::string::npos; p = c.find(harmless)) {
      c.erase(p, harmless.size());
    }
  }
  if (shell::is_compound(c) && c.find('>') != std::string::npos) return true;
  const auto cmds = simple_commands(c);
  return std::any_of(cmds.begin(), cmds.end(), is_mutating_simple) || inline_script_writes(c, cmds);
}

bool is_test_tool(std::string_view tool) {
  const std::string t = ascii::lowercase(tool);
  return t.find("test") != std::string::npos || t == "pytest" || t == "jest";
}

bool is_test_command(std::string_view command) {
  const auto cmds = simple_commands(command);
  return std::any_of(cmds.begin(), cmds.end(), is_test_simple);
}

bool is_file_op_command(std::string_view command) {
  if (shell::file_read_target(command)) return true;
  // Every simple command reads or writes a file (a `cd` aside): `cat > conf.py <<EOF … EOF` then
  // `sphinx-build …` fails as a build, and the file tools would not have helped it.
  bool any = false;
  for (const auto& words : simple_commands(command)) {
    const std::size_t s = command_start(words);
    if (s >= words.size()) continue;
    const std::string cmd = base(words[s]);
    if (cmd == "cat" || cmd == "sed" || cmd == "echo" || cmd == "printf" || cmd == "tee" ||
        cmd == "head" || cmd == "tail" || cmd == "touch" || cmd == "awk") {
      any = true;
    } else if (cmd != "cd") {
      return false;
    }
  }
  return any;
}

bool is_unproductive(bool ok, std::string_view output) {
  if (!ok) return true;
  const auto first = output.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return true;
  const auto last = output.find_last_not_of(" \t\r\n");
  if (last + 1 - first > 200) return false;  // a long answer is an answer
  const std::string t = ascii::lowercase(output.substr(first, last + 1 - first));
  return contains_any(t, {"no results", "no result found", "not found", "no matches",
                          "nothing found", "0 results", "no such file", "no files found"}) ||
         t == "[]" || t == "{}" || t == "null";
}

bool reports_test_failure(std::string_view output) {
  const std::string t = ascii::lowercase(output);
  // "0 failed" is a pass; any other count of failures is a failure.
  for (auto p = t.find(" failed"); p != std::string::npos; p = t.find(" failed", p + 1)) {
    std::size_t k = p;
    while (k > 0 && t[k - 1] >= '0' && t[k - 1] <= '9') --k;
    if (k < p && !(p - k == 1 && t[k] == '0')) return true;
  }
  return output.find("FAILED") != std::string_view::npos ||
         output.find("FAIL:") != std::string_view::npos ||
         t.find("tests failed") != std::string::npos;
}

}  // namespace loopguard::sdk
