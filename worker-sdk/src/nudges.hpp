// The words a detection puts in front of the agent. Every nudge names the tool (when there is
// one), the count, and what to try instead; the tone follows the severity.
#pragma once

#include <string>

#include "detectors/finding.hpp"

namespace loopguard::sdk {

struct nudge_text {
  std::string message;
  std::string suggestion;
};

nudge_text make_nudge(const finding& f, severity level, std::uint32_t occurrence);

}  // namespace loopguard::sdk
