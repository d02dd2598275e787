// Masks the parts of a tool's output that change on every run without meaning anything, so two
// results that differ only there fingerprint as the same outcome.
//
// Masked (each only as a whole word: no letter, digit or `_` directly before or after):
//   <uuid>  8-4-4-4-12 hex UUIDs
//   <time>  ISO-8601 dates and timestamps (2026-11-22, 2026-11-22T10:42:15.5Z, ...+01:00) and
//           times of day with seconds (10:42:15, 10:42:15.123)
//   <hex>   0x-prefixed hex numbers, and runs of 8 or more hex digits with at least one letter
//           (a run of decimal digits is a plain number and is kept)
//   <dur>   durations: a number with a unit, attached (12ms, 3.4s, 1m30s, 250us, 2h) or after
//           one space as a word (12 ms, 3 seconds, 5 min)
//   <pid>   the number after `pid` / `PID` (pid 1234, pid=1234, PID: 1234)
// Plain numbers are never masked: "10 tests passed" and "11 tests passed" stay different.
#pragma once

#include <string>
#include <string_view>

namespace loopguard {

std::string mask_volatile(std::string_view output);

}  // namespace loopguard
