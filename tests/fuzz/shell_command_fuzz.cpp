// The shell normalizer (shell_command.hpp) on arbitrary command lines.
//
// Contract checked: nothing throws or crashes; for a valid UTF-8 command every output (the
// normalized line, the words, the file read, the command name) is valid UTF-8; a compound
// command has no words; a file read's path is not empty and has no repeated slashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "loopguard/shell_command.hpp"

namespace {

namespace fuzz = loopguard::fuzz;
namespace shell = loopguard::shell;

enum { inputs, valid_input, compound, words, file_reads, kCounters };
fuzz::counters<kCounters> counters("shell_command",
                                   {"inputs", "valid_input", "compound", "words", "file_reads"});

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  const std::string_view command = fuzz::as_view(data, size);
  const bool valid = fuzz::valid_utf8(command);
  if (valid) counters.add(valid_input);

  const std::string normalized = shell::normalize_whitespace(command);
  const bool is_compound = shell::is_compound(command);
  const auto split = shell::split_words(command);
  const auto target = shell::file_read_target(command);
  const std::string name = shell::command_name(command);
  // The fingerprint applies the others to the normalized line; run them there too.
  (void)shell::is_compound(normalized);
  (void)shell::split_words(normalized);
  (void)shell::file_read_target(normalized);
  (void)shell::command_name(normalized);

  if (is_compound) {
    counters.add(compound);
    LG_FUZZ_CHECK(!split, "a compound command was split into words");
  }
  if (split) counters.add(words);
  if (target) {
    counters.add(file_reads);
    LG_FUZZ_CHECK(!target->empty(), "file_read_target gave an empty path");
    LG_FUZZ_CHECK(target->find("//") == std::string::npos,
                  "file_read_target left repeated slashes");
  }
  if (!valid) return 0;
  LG_FUZZ_CHECK(fuzz::valid_utf8(normalized), "normalize_whitespace output is not valid UTF-8");
  if (split) {
    for (const auto& w : *split) {
      LG_FUZZ_CHECK(fuzz::valid_utf8(w), "a word is not valid UTF-8");
    }
  }
  LG_FUZZ_CHECK(!target || fuzz::valid_utf8(*target), "file read path is not valid UTF-8");
  LG_FUZZ_CHECK(fuzz::valid_utf8(name), "command name is not valid UTF-8");
  return 0;
}
