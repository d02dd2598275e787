// `retrace`, judged on a result: the agent keeps getting back what it has already seen through
// other calls (paging back over a file it has read, reopening a window), with no progress since
// (docs/detectors.md, "[retrace]").
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "../call_history.hpp"
#include "finding.hpp"
#include "loopguard/config.hpp"
#include "streaks.hpp"

namespace loopguard::sdk {

// The results seen since the last progress, and which of the latest came back.
struct retrace_state {
  struct seen_result {
    std::uint64_t result = 0;  // result fingerprint
    std::uint64_t call = 0;    // the exact fingerprint of the call that got it
    std::size_t turn = 0;      // that call's turn
  };
  struct looked_at {
    std::size_t event_index = 0;
    bool retraced = false;
  };
  static constexpr std::size_t kMaxSeen = 256;  // per list; then its older half is forgotten
  std::vector<seen_result> seen;                // each result once, with the first call that got it
  std::vector<seen_result> latest;              // each call once, with the last result it got
  std::deque<looked_at> recent;                 // the last rule.window results looked at

  std::uint32_t count() const;  // retraced results among `recent`
  void clear() {
    seen.clear();
    latest.clear();
    recent.clear();
  }
};

// A result of the call `answered` with `output_bytes` bytes of output, at `event_index`. A
// successful new change (`answered.progress`) forgets everything and ends the loop. A
// successful, productive result of at least rule.min_bytes is looked at: it is *retraced* when
// another call got it first, in an earlier turn, and its own call did not get it the last time
// too (a call repeating its own result is exact's; a call coming back to what another showed is
// not). The ladder counts the retraced results among the last rule.window looked at.
streak_step<retrace_state> retrace_result(retrace_state s, const call_record& answered,
                                          std::size_t output_bytes, std::size_t event_index,
                                          const retrace_rule& rule);

}  // namespace loopguard::sdk
