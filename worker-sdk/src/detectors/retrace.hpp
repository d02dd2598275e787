// `retrace`, judged on a result: the agent keeps getting back what it has already seen (paging
// back over a file it has read, reopening a window, a search sent again), with no progress since
// (docs/detectors.md, "[retrace]").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../call_history.hpp"
#include "finding.hpp"
#include "loopguard/config.hpp"
#include "streaks.hpp"

namespace loopguard::sdk {

// The results seen since the last progress, and how many of them came back.
struct retrace_state {
  struct seen_result {
    std::uint64_t result = 0;  // result fingerprint
    std::uint64_t call = 0;    // the exact fingerprint of the call that got it
  };
  static constexpr std::size_t kMaxSeen = 256;  // then the older half is forgotten
  std::vector<seen_result> seen;                // each result once, with the first call that got it
  seen_result previous;                         // the last result looked at, with its call
  std::uint32_t count = 0;                      // results retraced
  std::size_t first = 0;                        // event index of the first of them

  void clear() {
    seen.clear();
    count = 0;
    first = 0;
  }
};

// A result of the call `answered` with `output_bytes` bytes of output, at `event_index`. A
// successful new change (`answered.progress`) ends the count. A successful, productive result of
// at least rule.min_bytes that another call got first (since the last change) is one more
// retraced result; a result its own call got first is not counted (the same call returning
// what it returned before is exact's, and a call paging on shows new results).
streak_step<retrace_state> retrace_result(retrace_state s, const call_record& answered,
                                          std::size_t output_bytes, std::size_t event_index,
                                          const retrace_rule& rule);

}  // namespace loopguard::sdk
