// Named starting configurations (docs/presets.md): balanced (the default), conservative,
// aggressive, and presets that reproduce the default loop handling of other agent systems so a
// team moving from one of them keeps its behaviour.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "loopguard/config.hpp"

namespace loopguard {

// nullopt for an unknown name.
std::optional<manager_config> preset(std::string_view name);

std::vector<std::string_view> preset_names();

}  // namespace loopguard
