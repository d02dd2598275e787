// `loopguard`: replay recorded runs, fingerprint, similarity, simulate a swarm, inspect a daemon,
// check the SDK's configuration.
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.hpp"
#include "loopguard/utf8.hpp"

int main(int argc, char** argv) {
  CLI::App app{"loopguard: doom-loop detection for LLM agents and agent swarms"};
  app.set_version_flag("--version", std::string("loopguard ") + LOOPGUARD_VERSION);
  app.require_subcommand(1);
  loopguard::cli::add_config_command(app);
  loopguard::cli::add_eval_command(app);
  loopguard::cli::add_fingerprint_command(app);
  loopguard::cli::add_inspect_command(app);
  loopguard::cli::add_replay_command(app);
  loopguard::cli::add_similarity_command(app);
  loopguard::cli::add_simulate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A command's own exit status (RuntimeError) stands; --help and --version end parsing with
    // success; any other is a usage error: exit 2, as bad input is for every command (README,
    // "loopguard"), not CLI11's own codes (105, 106, ...).
    const int code = app.exit(e);
    if (code == 0 || dynamic_cast<const CLI::RuntimeError*>(&e) != nullptr) return code;
    return 2;
  } catch (const std::exception& e) {
    // Bad input is reported by the commands (exit 2); anything reaching here is our bug, said
    // plainly instead of an abort.
    std::cerr << "loopguard: internal error: " << loopguard::utf8::repair(e.what()) << '\n';
    return 70;  // EX_SOFTWARE
  }
  return 0;
}
