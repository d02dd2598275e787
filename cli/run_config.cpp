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
  std::ifstream in(config_file, std::ios::binary);
  if (!in) return status::error(config_file + ": cannot open");
  std::ostringstream whole;
  whole << in.rdbuf();
  const std::string text = std::move(whole).str();
  const auto doc = json_input::parse(text);
  if (!doc) return doc.error().with_context(config_file + ": ");
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
