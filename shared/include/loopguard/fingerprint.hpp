// Fingerprints of tool calls and tool results (docs/detectors.md, "Fingerprints").
//
//   exact       XXH3-64 (seed 0) of `tool:` + the canonical JSON of all arguments, volatile keys
//               left out and shell commands whitespace-normalized.
//   structural  XXH3-64 (seed 1) of the normalized form: `bash:file_read:<path>` for a plain read
//               of one file by a shell tool, else `tool:` + canonical JSON of the primary keys
//               (of all the arguments when none of them is a primary key).
//   result      XXH3-64 (seed 2) of `ok\n` or `error\n` + the output after mask_volatile().
// The three kinds use different seeds, so a value of one kind never equals another kind's.
//
// Thread-safety: a fingerprinter is immutable after construction; share it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/canonical_args.hpp"
#include "loopguard/canonical_json.hpp"

namespace loopguard {

struct fingerprint_options {
  // Argument keys that identify what a call acts on; everything else is an optional flag.
  std::vector<std::string> primary_keys{"path", "file_path", "command",  "pattern", "query",
                                        "url",  "content",   "filename", "offset",  "limit"};
  // Argument keys that change on every call without meaning anything; dropped at every depth.
  std::vector<std::string> volatile_keys{"task_progress", "timestamp", "request_id"};
  // Tools whose `command` argument is a shell command line (compared case-insensitively).
  std::vector<std::string> shell_tools{"bash",
                                       "shell",
                                       "sh",
                                       "zsh",
                                       "run_command",
                                       "execute_command",
                                       "run_terminal_cmd",
                                       "run_shell_command",
                                       "terminal",
                                       "exec",
                                       "execute_bash",
                                       "bash_tool"};
  // The argument keys of a shell tool that hold the command line.
  std::vector<std::string> command_keys{"command", "cmd"};
  // Keys dropped at every depth from a result that is a JSON object or array before it is
  // compared (runtime details such as a duration or a working directory); none by default.
  std::vector<std::string> result_volatile_keys;
};

struct call_fingerprint {
  std::uint64_t exact = 0;
  std::uint64_t structural = 0;
  std::string normalized;      // the text behind `structural`, e.g. bash:file_read:foo.ts
  std::string canonical_args;  // the canonical JSON behind `exact` (without the tool prefix)
  bool is_shell = false;       // the tool is a shell tool
  std::string shell_command;   // its whitespace-normalized command line (valid UTF-8), if is_shell
};

// How many bytes of the normalized form a judged call's `summary` keeps (docs/protocol.md,
// "events"): well under the protocol's kMaxSummaryBytes.
inline constexpr std::size_t kCallSummaryBytes = 80;
// A judged call's `summary`: the normalized form cut to kCallSummaryBytes at a code-point
// boundary (utf8::cut). The one rule the SDK and `loopguard replay` share.
std::string summary_of(const call_fingerprint& call);

class fingerprinter {
 public:
  static constexpr std::uint64_t kExactSeed = 0;
  static constexpr std::uint64_t kStructuralSeed = 1;
  static constexpr std::uint64_t kResultSeed = 2;

  fingerprinter();
  explicit fingerprinter(fingerprint_options options);

  // `args` is normally an object; any other JSON value is fingerprinted as it is. Strings that
  // are not valid UTF-8 (the tool name, keys, values) are repaired first (utf8::repair), and a
  // value nested deeper than json_input::kMaxDepth is fingerprinted as a marker string.
  call_fingerprint of_call(std::string_view tool, const nlohmann::json& args) const;

  // The same from JSON text, without building a document (the hot path), under the rules of
  // json_input.hpp. Text that is not JSON within those limits is fingerprinted as one string
  // argument, so a malformed call still repeats as itself. Never throws.
  call_fingerprint of_call_text(std::string_view tool, std::string_view args_json) const;
  // As of_call_text, but nullopt for text that is not JSON within the limits.
  std::optional<call_fingerprint> try_of_call_text(std::string_view tool,
                                                   std::string_view args_json) const;

  // `output` that is not valid UTF-8 is repaired before masking and hashing.
  std::uint64_t of_result(bool ok, std::string_view output) const;

  bool is_shell_tool(std::string_view tool) const;
  const fingerprint_options& options() const { return options_; }

 private:
  call_fingerprint finish(std::string_view tool, canonical_args& args) const;

  fingerprint_options options_;
  key_set primary_;
  key_set volatile_;
  key_set result_volatile_;
  key_set shell_tools_;  // lowercase
};

}  // namespace loopguard
