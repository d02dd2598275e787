// Reading shell commands the way the fingerprints need to: whitespace-normalized, split into
// words, and recognized as a plain read of one file (docs/detectors.md, "Shell normalization").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopguard::shell {

// Runs of unquoted spaces and tabs become one space; leading and trailing whitespace goes;
// a backslash-newline continuation becomes a space; text inside quotes is kept as it is.
std::string normalize_whitespace(std::string_view command);

// True when the command is more than one simple command or touches redirection: an unquoted
// `|`, `;`, `&`, `<`, `>`, `(`, `)` or newline, or a command substitution (`$(` or a backtick,
// also inside double quotes).
bool is_compound(std::string_view command);

// The words of a simple command with quotes removed; nullopt for a compound command, an
// unbalanced quote, or an unquoted `$`, `*`, `?`, `[` or `{` (the words are not literal).
std::optional<std::vector<std::string>> split_words(std::string_view command);

// If `command` reads exactly one file with cat, head, tail, less, more, wc, nl, bat or `sed -n`
// (any of their flags, the command word may carry a directory), the file's path: a leading
// "./" removed and repeated slashes collapsed. Otherwise nullopt.
std::optional<std::string> file_read_target(std::string_view command);

// The command word (basename, after any leading VAR=value assignments), or "" when none.
std::string command_name(std::string_view command);

}  // namespace loopguard::shell
