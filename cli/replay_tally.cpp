#include "replay_tally.hpp"

#include "text_table.hpp"

namespace loopguard::cli {

void detection_tally::add(const std::vector<replay_line>& lines) {
  for (const replay_line& l : lines) {
    if (l.det.level == severity::none) continue;  // lifted verdicts are never lines; be sure
    const auto level = static_cast<std::size_t>(l.det.level) - 1;
    ++by_detector_[std::string(to_string(l.det.detector))][level];
    ++total_;
  }
}

std::string detection_tally::table() const {
  text_table t({"DETECTOR", "WARN", "CRITICAL", "TERMINATE", "TOTAL"},
               {align::left, align::right, align::right, align::right, align::right});
  std::array<std::uint64_t, 3> sums{};
  const auto row = [&](const std::string& name, const std::array<std::uint64_t, 3>& n) {
    t.add_row({name, std::to_string(n[0]), std::to_string(n[1]), std::to_string(n[2]),
               std::to_string(n[0] + n[1] + n[2])});
  };
  for (const auto& [detector, n] : by_detector_) {
    row(detector, n);
    for (std::size_t i = 0; i < n.size(); ++i) sums[i] += n[i];
  }
  row("TOTAL", sums);
  return "replay: " + std::to_string(files_) + " files, " + std::to_string(events_) + " events, " +
         std::to_string(total_) + " detections\n" + t.render();
}

}  // namespace loopguard::cli
