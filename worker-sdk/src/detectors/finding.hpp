// What a detector reports before escalation turns it into a detection with a severity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "loopguard/config.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard::sdk {

struct finding {
  detector_id detector = detector_id::exact;
  std::uint64_t identity = 0;  // which loop: the same identity across events is the same loop
  std::uint32_t count = 0;     // what the ladder compares
  ladder steps;                // the ladder to compare it with
  double confidence = 1.0;
  std::size_t loop_start = 0;  // event index
  std::string tool;
  std::string detail;         // what the nudge should mention (a pattern, a path, an error)
  bool rejectable = false;    // a repeat call: at critical it can be rejected
  bool results_known = true;  // every counted call's outcome was known and compared
  bool hard_stop = false;     // a limit reached: terminate now
};

}  // namespace loopguard::sdk
