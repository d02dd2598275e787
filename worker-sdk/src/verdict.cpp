#include "loopguard/verdict.hpp"

#include <algorithm>
#include <array>

namespace loopguard {
namespace {

constexpr std::string_view name_of(detector_id d) {
  switch (d) {  // -Wswitch: every detector_id needs its case
    case detector_id::exact:
      return "exact";
    case detector_id::structural:
      return "structural";
    case detector_id::cycle:
      return "cycle";
    case detector_id::similar_args:
      return "similar_args";
    case detector_id::result:
      return "result";
    case detector_id::output_similarity:
      return "output_similarity";
    case detector_id::content:
      return "content";
    case detector_id::summary:
      return "summary";
    case detector_id::test_fix:
      return "test_fix";
    case detector_id::bash_cascade:
      return "bash_cascade";
    case detector_id::limit:
      return "limit";
    case detector_id::intent:
      return "intent";
    case detector_id::retrace:
      return "retrace";
    case detector_id::judge:
      return "judge";
    case detector_id::budget:
      return "budget";
    case detector_id::handoff:
      return "handoff";
    case detector_id::global:
      return "global";
  }
  return {};
}

// Indexed by detector_id, built from name_of so that the two cannot disagree.
constexpr auto kDetectorNames = [] {
  std::array<std::string_view, kDetectorCount> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = name_of(static_cast<detector_id>(i));
  return names;
}();
static_assert(std::none_of(kDetectorNames.begin(), kDetectorNames.end(),
                           [](std::string_view name) { return name.empty(); }),
              "every detector_id up to kDetectorCount needs a name in name_of");
static_assert(name_of(static_cast<detector_id>(kDetectorCount)).empty(),
              "a detector_id after global: kDetectorCount (verdict.hpp) would miss it");

}  // namespace

std::string_view to_string(detector_id d) {
  return kDetectorNames[static_cast<std::size_t>(d)];
}

std::optional<detector_id> parse_detector(std::string_view name) {
  for (std::size_t i = 0; i < kDetectorNames.size(); ++i) {
    if (kDetectorNames[i] == name) return static_cast<detector_id>(i);
  }
  return std::nullopt;
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
