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

// `s` without any occurrence of `drop`, in one pass.
std::string without(std::string_view s, std::initializer_list<std::string_view> drop) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto hit = std::find_if(drop.begin(), drop.end(),
                                  [&](std::string_view d) { return s.substr(i).starts_with(d); });
    if (hit != drop.end()) {
      i += hit->size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// The delimiter of a here-document whose `<<` starts at `at` (`<<-` too; quoted, as `<<'EOF'`
// or `<<"END X"`, or not), and where the operator and its word end; nullopt for no word. (A
// here-string, `<<<`, is the caller's.)
std::optional<std::pair<std::string, std::size_t>> heredoc_at(std::string_view command,
                                                              std::size_t at) {
  std::size_t i = at + 2;
  if (i < command.size() && command[i] == '-') ++i;
  while (i < command.size() && (command[i] == ' ' || command[i] == '\t')) ++i;
  std::string word;
  char quote = 0;
  for (; i < command.size(); ++i) {
    const char c = command[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
               c == '>' || c == '(' || c == ')') {
      break;
    } else if (c != '\\') {
      word += c;
    }
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

// Reads a command line into its simple commands, word by word (simple_commands below).
class command_reader {
 public:
  explicit command_reader(std::string_view command) : c_(command) {}

  std::vector<std::vector<std::string>> read() && {
    for (i_ = 0; i_ < c_.size(); ++i_) step(c_[i_]);
    flush();
    return std::move(out_);
  }

 private:
  void step(char c) {
    if (c == '\\' && quote_ != '\'' && i_ + 1 < c_.size()) {  // escaped: taken as it is
      word_ += c;
      word_ += c_[++i_];
      return;
    }
    if (quote_ == 0) track_arithmetic(c);
    if (quote_ == 0 && operator_word(c)) return;
    if (c == '\n' && quote_ == 0) {
      next_command();
      if (!heredocs_.empty()) i_ = skip_heredocs(c_, i_, heredocs_);
      heredocs_.clear();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      flush();
    } else if (c == '&' && in_redirection()) {
      word_ += c;  // 2>&1, &>/dev/null: one word, not two commands
    } else if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      next_command();
    } else if (c == '"' || c == '\'') {
      quote_ = quote_ == 0 ? c : (quote_ == c ? 0 : quote_);
    } else {
      word_ += c;
    }
  }
  // `$((` … `))`: inside, `<<` is a shift, not a here-document.
  void track_arithmetic(char c) {
    if (c == '$' && c_.substr(i_, 3) == "$((") ++arithmetic_;
    if (c == ')' && arithmetic_ > 0 && c_.substr(i_, 2) == "))") --arithmetic_;
  }
  // `<<<` and `<<WORD` stay words of their command (`python3 <<EOF` is code on the command line);
  // a here-document's delimiter does not, and its body is skipped at the end of the line.
  bool operator_word(char c) {
    if (c != '<' || arithmetic_ > 0 || c_.substr(i_, 2) != "<<") return false;
    if (c_.substr(i_, 3) == "<<<") {
      flush();
      out_.back().emplace_back("<<<");
      i_ += 2;
      return true;
    }
    const auto h = heredoc_at(c_, i_);
    if (!h) return false;
    flush();
    out_.back().emplace_back("<<");
    heredocs_.push_back(h->first);
    i_ = h->second - 1;
    return true;
  }
  bool in_redirection() const {
    return (i_ > 0 && (c_[i_ - 1] == '>' || c_[i_ - 1] == '<')) ||
           (i_ + 1 < c_.size() && c_[i_ + 1] == '>');
  }
  void flush() {
    if (!word_.empty()) out_.back().push_back(std::move(word_));
    word_.clear();
  }
  void next_command() {
    flush();
    if (!out_.back().empty()) out_.emplace_back();
  }

  std::string_view c_;
  std::size_t i_ = 0;
  std::vector<std::vector<std::string>> out_ = std::vector<std::vector<std::string>>(1);
  std::string word_;
  std::vector<std::string> heredocs_;  // opened on the current line
  char quote_ = 0;                     // newlines inside quotes do not separate commands
  int arithmetic_ = 0;                 // open `$((`
};

// Words of a command line, split on blanks and on the shell's command separators (`;`, `&`,
// `|`, parentheses, newlines), so that each simple command of `cd x && pytest -q` can be looked
// at. Separators split inside quotes too (`bash -c 'cd x && pytest'` is read), newlines only
// outside them (a quoted script's lines stay one argument); a backslash escapes the character
// after it, and the `&` of a redirection (`2>&1`) separates nothing. Here-document bodies are
// data: skipped.
std::vector<std::vector<std::string>> simple_commands(std::string_view command) {
  return command_reader(command).read();
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

// The top-level arguments of the call whose `(` is at `open`, looking at most kCallScan bytes
// ahead; nullopt when the call does not close within them.
constexpr std::size_t kCallScan = 256;
std::optional<std::vector<std::string_view>> call_args(std::string_view code, std::size_t open) {
  std::vector<std::string_view> args;
  std::size_t start = open + 1, depth = 0;
  char quote = 0;
  const std::size_t end = std::min(code.size(), open + 1 + kCallScan);
  for (std::size_t j = open + 1; j < end; ++j) {
    const char c = code[j];
    if (c == '\\') {
      ++j;  // an escaped character (a quote escaped for the shell, too)
    } else if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      args.push_back(code.substr(start, j - start));
      start = j + 1;
    } else if (c == ')') {
      args.push_back(code.substr(start, j - start));
      return args;
    }
  }
  return std::nullopt;
}

// A string literal that is a file mode which writes: `'w'`, `"a+"`, `\"wb\"`, `mode='x'`.
bool writing_mode(std::string_view arg) {
  arg.remove_prefix(std::min(arg.find_first_not_of(" \t\n"), arg.size()));
  if (arg.starts_with("mode=")) arg.remove_prefix(5);
  if (arg.starts_with('\\')) arg.remove_prefix(1);
  if (arg.empty() || (arg[0] != '"' && arg[0] != '\'')) return false;
  const std::string_view m = arg.substr(1, arg.find_first_of("\"'\\", 1) - 1);
  return !m.empty() && m.size() <= 4 && m.find_first_not_of("rwxabt+") == std::string_view::npos &&
         m.find_first_of("wax+") != std::string_view::npos;
}

// A call `open(path, mode)` (or `x.open(mode)`, as pathlib's) in `code` with a mode that writes.
bool opens_for_writing(std::string_view code) {
  for (auto p = code.find("open("); p != std::string_view::npos; p = code.find("open(", p + 1)) {
    const auto args = call_args(code, p + 4);
    if (!args) continue;
    const bool method = p > 0 && code[p - 1] == '.';
    for (std::size_t k = 0; k < std::min<std::size_t>(args->size(), 2); ++k) {
      if ((k == 1 || method) && writing_mode((*args)[k])) return true;
    }
  }
  return false;
}

// Code given to an interpreter on its command line (`python3 -c '…'`, `node -e '…'`, a here
// document or here-string fed to `python3`) that writes files: a file opened for writing, or a
// write call. The whole command line is searched, not only the code.
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
  const std::string code = without(command, {"stdout.write", "stderr.write"});  // printing
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

namespace {

using commands = std::vector<std::vector<std::string>>;

// The three readings of one command line, from its simple commands read once.
bool mutating(std::string_view command, const commands& cmds) {
  // An output redirection writes a file (`2>&1` and `>/dev/null` do not count).
  const std::string c = without(command, {"2>&1", ">/dev/null", "> /dev/null", "&>/dev/null"});
  if (shell::is_compound(c) && c.find('>') != std::string::npos) return true;
  return std::any_of(cmds.begin(), cmds.end(), is_mutating_simple) || inline_script_writes(c, cmds);
}

bool runs_tests(const commands& cmds) {
  return std::any_of(cmds.begin(), cmds.end(), is_test_simple);
}

bool file_op(std::string_view command, const commands& cmds) {
  if (shell::file_read_target(command)) return true;
  // Every simple command reads or writes a file (a `cd` aside): `cat > conf.py <<EOF … EOF` then
  // `sphinx-build …` fails as a build, and the file tools would not have helped it.
  bool any = false;
  for (const auto& words : cmds) {
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

}  // namespace

command_kind kind_of_command(std::string_view command) {
  const commands cmds = simple_commands(command);
  return {mutating(command, cmds), runs_tests(cmds), file_op(command, cmds)};
}

bool is_mutating_command(std::string_view command) {
  return mutating(command, simple_commands(command));
}

bool is_test_tool(std::string_view tool) {
  const std::string t = ascii::lowercase(tool);
  return t.find("test") != std::string::npos || t == "pytest" || t == "jest";
}

bool is_test_command(std::string_view command) {
  return runs_tests(simple_commands(command));
}

bool is_file_op_command(std::string_view command) {
  return file_op(command, simple_commands(command));
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
