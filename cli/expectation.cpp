#include "expectation.hpp"

namespace loopguard::cli {

std::optional<std::size_t> first_counted(const trace_expect& x, const file_result& r) {
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    const replay_line& l = r.lines[i];
    if (!x.detector.empty() && to_string(l.det.detector) != x.detector) continue;
    if (l.det.level < severity::warn) continue;
    return i;
  }
  return std::nullopt;
}

std::string check_expectation(const trace& tr, const file_result& r) {
  if (!tr.meta || !tr.meta->expect) return "no meta line with an \"expect\" object";
  const trace_expect& x = *tr.meta->expect;
  const auto line = first_counted(x, r);
  std::optional<std::size_t> first;
  if (line) first = r.lines[*line].event;
  const std::string what = x.detector.empty() ? "a detection" : "a " + x.detector + " detection";
  if (!x.loop) {
    if (first)
      return "expected no " + what.substr(2) + ", got one at event " + std::to_string(*first);
    return "";
  }
  if (!first) return "expected " + what + ", got none";
  if (x.within && *first > *x.within) {
    return "expected " + what + " at or before event " + std::to_string(*x.within) +
           ", first at event " + std::to_string(*first);
  }
  return "";
}

}  // namespace loopguard::cli
