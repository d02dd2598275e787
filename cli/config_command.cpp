// `loopguard config [--config FILE] [--print-config]`: the SDK's configuration as a program
// using resolve_sdk_config() gets it (docs/configuration.md, "The SDK's config file"): the file
// (--config, else $LOOPGUARD_CONFIG, else the defaults), then LOOPGUARD_DAEMON, LOOPGUARD_TOKEN,
// LOOPGUARD_SWARM and LOOPGUARD_WORKER. A bad file or variable is one line naming the key or the
// variable, exit 2.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "loopguard/sdk_config.hpp"
#include "loopguard/utf8.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

struct config_options {
  std::string config_file;
  bool print = false;
};

int run_config(const config_options& o) {
  const auto c = resolve_sdk_config(o.config_file);
  if (!c) {
    std::cerr << "loopguard config: " << utf8::repair(c.error().message()) << '\n';
    return kExitBadInput;
  }
  if (o.print) {
    std::cout << to_json(*c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
  return 0;
}

}  // namespace

void add_config_command(CLI::App& app) {
  auto o = std::make_shared<config_options>();
  auto* cmd = app.add_subcommand(
      "config", "Check the SDK's configuration (file, then LOOPGUARD_* variables) and print it");
  cmd->add_option("--config", o->config_file,
                  "The SDK's JSON config file (docs/configuration.md); default: $LOOPGUARD_CONFIG");
  cmd->add_flag("--print-config", o->print,
                "Print the resolved configuration as JSON (the token shows as \"<set>\")");
  cmd->footer(
      "Exit status: 0 the configuration is valid; 2 a bad option, file, key or variable (one "
      "line naming it).");
  cmd->callback([o] {
    if (int rc = run_config(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
