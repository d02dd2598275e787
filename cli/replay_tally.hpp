// `loopguard replay --summary`: the detections of a run counted by detector and severity, and
// the table that shows them (docs/trace-format.md, "Summary"). Pure.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay_line.hpp"

namespace loopguard::cli {

class detection_tally {
 public:
  void add(const std::vector<replay_line>& lines);
  void add_file(std::uint64_t events) {
    ++files_;
    events_ += events;
  }
  std::uint64_t total() const { return total_; }

  // "replay: F files, E events, D detections", then one row per detector that fired (by
  // name) with its warn, critical, terminate and total counts, and a TOTAL row.
  std::string table() const;

 private:
  std::map<std::string, std::array<std::uint64_t, 3>> by_detector_;  // warn, critical, terminate
  std::uint64_t total_ = 0, files_ = 0, events_ = 0;
};

}  // namespace loopguard::cli
