#include "run_config.hpp"

#include <fstream>
#include <sstream>

#include "loopguard/json_input.hpp"
#include "loopguard/presets.hpp"
#include "loopguard/sdk_config.hpp"
#include "replay_swarm.hpp"

namespace loopguard::cli {

result<manager_config> load_config(const std::string& preset_name, const std::string& config_file) {
  if (config_file.empty()) {
    auto p = preset(preset_name);
    if (!p) {
      std::string names;
      for (auto n : preset_names()) names += (names.empty() ? "" : ", ") + std::string(n);
      return status::error("unknown preset \"" + preset_name + "\" (known: " + names + ")");
    }
    return *p;
  }
  const auto doc = json_input::parse_file(config_file);
  if (!doc) return doc.error();
  // The SDK's config file holds the detector configuration and, optionally, a "daemon" object
  // (checked, then ignored: replaying judges offline).
  auto config = parse_sdk_config(doc->value);
  if (!config) return config.error().with_context(config_file + ": ");
  if (status s = swarm_replay::validate(config->detector); !s.ok()) {
    return s.with_context(config_file + ": ");
  }
  return std::move(config->detector);
}

}  // namespace loopguard::cli
