#include "loopguard/verdict.hpp"

#include <array>

namespace loopguard {
namespace {

constexpr std::array<std::string_view, kDetectorCount> kDetectorNames{
    "exact",   "structural", "cycle",    "similar_args", "result", "output_similarity",
    "content", "summary",    "test_fix", "bash_cascade", "limit",  "global"};

}  // namespace

std::string_view to_string(detector_id d) {
  return kDetectorNames[static_cast<std::size_t>(d)];
}

bool parse_detector(std::string_view name, detector_id& out) {
  for (std::size_t i = 0; i < kDetectorNames.size(); ++i) {
    if (kDetectorNames[i] == name) {
      out = static_cast<detector_id>(i);
      return true;
    }
  }
  return false;
}

std::string_view to_string(action a) {
  switch (a) {
    case action::allow:
      return "allow";
    case action::nudge:
      return "nudge";
    case action::reject:
      return "reject";
    case action::terminate:
      return "terminate";
  }
  return "allow";
}

}  // namespace loopguard
