#include "streaks.hpp"

#include <cstdio>

namespace loopguard::sdk {

namespace {

// A count for the report: the used amount (a cost, seconds from a caller's clock) may be any
// double; casting one beyond uint32_t's range, or NaN, would be undefined.
std::uint32_t saturated_count(double used) {
  if (!(used > 0)) return 0;
  if (used >= 4294967295.0) return 4294967295U;
  return static_cast<std::uint32_t>(used);
}

}  // namespace

std::optional<finding> streak_finding(detector_id d, const streak& s, const streak_rule& rule,
                                      std::string tool, std::string detail) {
  if (!rule.enabled || s.length < rule.steps.warn_at) return std::nullopt;
  finding f;
  f.detector = d;
  f.identity = static_cast<std::uint64_t>(d) + 100;
  f.count = s.length;
  f.steps = rule.steps;
  f.loop_start = s.start;
  f.confidence = 0.8;
  f.tool = std::move(tool);
  f.detail = std::move(detail);
  return f;
}

namespace {

std::string format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::vector<finding> safety_limits::check(const usage& u, std::size_t event_index) {
  std::vector<finding> out;
  if (!rule_.enabled) return out;
  struct one {
    double used, limit;
    const char* what;
  };
  const std::array<one, 4> limits{{
      {static_cast<double>(u.turns), static_cast<double>(rule_.max_iterations), "iterations"},
      {u.elapsed, rule_.max_wall_seconds, "seconds of wall time"},
      {u.cost, rule_.max_cost, "cost"},
      {static_cast<double>(u.consecutive_failures),
       static_cast<double>(rule_.max_consecutive_failures), "consecutive failed tool calls"},
  }};
  for (std::size_t i = 0; i < limits.size(); ++i) {
    const one& l = limits[i];
    if (l.limit <= 0) continue;
    finding f;
    f.detector = detector_id::limit;
    f.identity = 200 + i;
    f.loop_start = event_index;
    f.count = saturated_count(l.used);
    f.confidence = 1.0;
    // Iterations and failures count what already happened: the limit-th is still allowed
    // for iterations (a limit of 100 lets 100 turns run), reached means stop for the rest.
    const bool reached = i == 0 ? l.used > l.limit : l.used >= l.limit;
    if (reached) {
      f.hard_stop = true;
      f.steps = ladder{1, 1};
      f.detail = std::string(l.what) + " reached the limit of " + format(l.limit) + " (now " +
                 format(l.used) + ")";
      out.push_back(std::move(f));
    } else if (rule_.warn_fraction < 1 && l.used >= rule_.warn_fraction * l.limit && !warned_[i]) {
      warned_[i] = true;
      f.steps = ladder{1, 0};
      f.count = 1;
      f.detail =
          std::string(l.what) + " at " + format(l.used) + " of the limit of " + format(l.limit);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace loopguard::sdk
