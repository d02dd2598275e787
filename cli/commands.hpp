// Every `loopguard` subcommand registers itself on the top-level CLI11 app. A command's callback
// reports failure by throwing CLI::RuntimeError(exit_code) after printing its own message to
// stderr; main() turns that into the process exit status.
#pragma once

#include <CLI/CLI.hpp>

namespace loopguard::cli {

void add_config_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_fingerprint_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_similarity_command(CLI::App& app);
void add_simulate_command(CLI::App& app);

}  // namespace loopguard::cli
