// A self-overwriting status line for a terminal ("replay: 1234/5000 files, 12 detections"),
// redrawn at most every kInterval; nothing at all when disabled (stderr is not a terminal).
// Pure: each call returns the bytes to write to stderr, and the time comes in as a parameter.
// Anything else written to stderr goes between clear() and restore(), so it never mixes with
// the line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace loopguard::cli {

class progress_line {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr auto kInterval = std::chrono::milliseconds(100);

  progress_line(std::size_t total_files, bool enabled) : total_(total_files), on_(enabled) {}

  // The line with these counts, when the last one was drawn kInterval ago or more (or never).
  std::string update(std::size_t files_done, std::uint64_t detections, clock::time_point now);
  // Erases the line if it is shown.
  std::string clear();
  // Draws the last line again after clear().
  std::string restore();

 private:
  std::size_t total_;
  bool on_;
  bool shown_ = false, drawn_ = false;
  std::string text_;
  clock::time_point last_;
};

}  // namespace loopguard::cli
