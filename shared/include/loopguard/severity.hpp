// How strongly a detection asks the agent to change course. Ordered: a verdict is the maximum.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace loopguard {

enum class severity : std::uint8_t { none = 0, warn = 1, critical = 2, terminate = 3 };

constexpr std::string_view to_string(severity s) {
  switch (s) {
    case severity::none:
      return "none";
    case severity::warn:
      return "warn";
    case severity::critical:
      return "critical";
    case severity::terminate:
      return "terminate";
  }
  return "none";
}

constexpr std::optional<severity> parse_severity(std::string_view s) {
  if (s == "none") return severity::none;
  if (s == "warn") return severity::warn;
  if (s == "critical") return severity::critical;
  if (s == "terminate") return severity::terminate;
  return std::nullopt;
}

}  // namespace loopguard
