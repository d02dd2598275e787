// Rate limit of the daemon's log lines, per kind of line: within each window of `window`, the
// first `burst` lines of a kind are written and the rest only counted; once the window has
// ended, the count comes out as one "suppressed N" line (docs/operations.md, "Logs"). So a
// reconnect storm or a full disk writes a few lines every window instead of one per event.
// Pure: the caller passes the time; not thread-safe (daemon_log holds it under a mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loopguard::daemon {

class line_limiter {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t kBurst = 20;
  static constexpr std::chrono::seconds kWindow{10};

  struct suppressed {
    std::string kind;
    std::uint64_t lines = 0;
  };
  struct admission {
    bool write = false;
    // Lines of this kind held back in its window that ended just now (0: none); to be reported
    // before this line.
    std::uint64_t suppressed_before = 0;
  };

  explicit line_limiter(std::size_t burst = kBurst, clock::duration window = kWindow)
      : burst_(burst), window_(window) {}

  admission admit(std::string_view kind, clock::time_point now);
  // The kinds whose window has ended with lines held back, each once; their counts restart.
  std::vector<suppressed> expire(clock::time_point now);
  // Every kind with lines held back, window ended or not (at exit); all counts restart.
  std::vector<suppressed> drain();

 private:
  struct window_state {
    clock::time_point start;
    std::size_t written = 0;
    std::uint64_t held = 0;
  };
  std::size_t burst_;
  clock::duration window_;
  std::map<std::string, window_state, std::less<>> kinds_;
};

}  // namespace loopguard::daemon
