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

// `rejects_at_critical`: whether a critical repeat call is refused (escalation.reject_at_critical).
nudge_text make_nudge(const finding& f, severity level, std::uint32_t occurrence,
                      bool rejects_at_critical);

}  // namespace loopguard::sdk
