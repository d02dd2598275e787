// What a tool name, a shell command or an output says about a call: mutating, a test run, a file
// operation, an unproductive answer. Internal to the SDK.
#pragma once

#include <string_view>

namespace loopguard::sdk {

// Heuristics over tool names and shell commands (docs/detectors.md, "What counts as progress").
bool is_mutating_tool(std::string_view tool);
bool is_mutating_command(std::string_view command);
// A shell command line's three readings (is_mutating_command, is_test_command,
// is_file_op_command) from one reading of its simple commands: what a call is recorded with.
struct command_kind {
  bool mutating = false, test = false, file_op = false;
};
command_kind kind_of_command(std::string_view command);
// A multi-command tool (an editor tool whose name says it edits, such as `str_replace_editor`)
// called with a read-only sub-command: its canonical arguments hold a `command` or `action`
// string whose first word is `view`, `read`, `show`, `list`, `get`, `cat`, `search`, `find`,
// `open` or `ls`.
bool names_read_only_command(std::string_view canonical_args);
bool is_test_tool(std::string_view tool);
bool is_test_command(std::string_view command);
bool is_file_op_command(std::string_view command);
// Failed, empty, or one of the usual "nothing found" answers.
bool is_unproductive(bool ok, std::string_view output);
// A test run's output reports failures even though the tool call itself succeeded.
bool reports_test_failure(std::string_view output);

}  // namespace loopguard::sdk
