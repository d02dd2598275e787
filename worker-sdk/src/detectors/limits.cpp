#include "limits.hpp"

#include <cstdio>
#include <string>
#include <utility>

namespace loopguard::sdk {
namespace {

// A count for the report: the used amount (a cost, seconds from a caller's clock) may be any
// double; casting one beyond uint32_t's range, or NaN, would be undefined.
std::uint32_t saturated_count(double used) {
  if (!(used > 0)) return 0;
  if (used >= 4294967295.0) return 4294967295U;
  return static_cast<std::uint32_t>(used);
}

std::string format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct one_limit {
  double used, limit;
  const char* what;
  fixed_loop loop;
};

finding limit_finding(const one_limit& l, std::size_t event_index) {
  finding f;
  f.detector = detector_id::limit;
  f.identity = identity_of(l.loop);
  f.loop_start = event_index;
  f.count = saturated_count(l.used);
  f.confidence = 1.0;
  return f;
}

}  // namespace

std::vector<finding> safety_limits::check(const usage& u, std::size_t event_index) {
  std::vector<finding> out;
  if (!rule_.enabled) return out;
  const std::array<one_limit, 4> limits{{
      {static_cast<double>(u.turns), static_cast<double>(rule_.max_iterations), "iterations",
       fixed_loop::iterations},
      {u.elapsed, rule_.max_wall_seconds, "seconds of wall time", fixed_loop::wall_time},
      {u.cost, rule_.max_cost, "cost", fixed_loop::cost},
      {static_cast<double>(u.consecutive_failures),
       static_cast<double>(rule_.max_consecutive_failures), "consecutive failed tool calls",
       fixed_loop::consecutive_failures},
  }};
  for (std::size_t i = 0; i < limits.size(); ++i) {
    const one_limit& l = limits[i];
    if (l.limit <= 0) continue;
    // Iterations and failures count what already happened: the limit-th is still allowed
    // for iterations (a limit of 100 lets 100 turns run), reached means stop for the rest.
    const bool reached = l.loop == fixed_loop::iterations ? l.used > l.limit : l.used >= l.limit;
    if (reached) {
      finding f = limit_finding(l, event_index);
      f.hard_stop = true;
      f.steps = ladder{1, 1};
      f.detail = std::string(l.what) + " reached the limit of " + format(l.limit) + " (now " +
                 format(l.used) + ")";
      out.push_back(std::move(f));
    } else if (rule_.warn_fraction < 1 && l.used >= rule_.warn_fraction * l.limit && !warned_[i]) {
      warned_[i] = true;
      finding f = limit_finding(l, event_index);
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
