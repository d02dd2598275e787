// The configuration a replaying subcommand judges with: a preset by name, or a JSON file
// (docs/configuration.md; the SDK's config file, whose "daemon" object is checked and ignored),
// validated for the offline swarm rule too.
#pragma once

#include <string>

#include "loopguard/config.hpp"

namespace loopguard::cli {

// An error names the unknown preset (with the known ones) or the file and the config key.
result<manager_config> load_config(const std::string& preset_name, const std::string& config_file);

}  // namespace loopguard::cli
