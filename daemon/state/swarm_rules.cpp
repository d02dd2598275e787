#include "state/swarm_rules.hpp"

#include <string>

namespace loopguard::daemon {
namespace {

constexpr std::uint64_t kMaxMinWorkers = 100000;
constexpr double kMaxWindowSeconds = 30.0 * 24 * 3600;  // 30 days
constexpr std::uint64_t kMinFingerprints = 16;
constexpr std::uint64_t kMaxFingerprints = 100000000;

std::string range(std::uint64_t lo, std::uint64_t hi) {
  return "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
}

}  // namespace

status validate(const swarm_rules& r) {
  using json_fields::field_error;
  using nlohmann::json;
  const auto cap = swarm_rules::kMaxWindowCalls;
  if (r.threshold < 1 || r.threshold > cap) {
    return field_error("swarm.threshold", range(1, cap), json(r.threshold));
  }
  if (r.min_workers < 1 || r.min_workers > kMaxMinWorkers) {
    return field_error("swarm.min_workers", range(1, kMaxMinWorkers), json(r.min_workers));
  }
  if (!(r.window_seconds > 0) || r.window_seconds > kMaxWindowSeconds) {
    return field_error("swarm.window_seconds", "a number in (0, 2592000]", json(r.window_seconds));
  }
  if (r.absolute_cap < r.threshold || r.absolute_cap > cap) {
    return field_error(
        "swarm.absolute_cap",
        "an integer in threshold (" + std::to_string(r.threshold) + ").." + std::to_string(cap),
        json(r.absolute_cap));
  }
  if (r.critical_at != 0 && (r.critical_at <= r.threshold || r.critical_at > cap)) {
    return field_error("swarm.critical_at", "0 (never) or " + range(r.threshold + 1, cap),
                       json(r.critical_at));
  }
  if (r.max_fingerprints_per_swarm < kMinFingerprints ||
      r.max_fingerprints_per_swarm > kMaxFingerprints) {
    return field_error("swarm.max_fingerprints_per_swarm",
                       range(kMinFingerprints, kMaxFingerprints),
                       json(r.max_fingerprints_per_swarm));
  }
  return {};
}

void read_swarm_rules(json_fields::object x, swarm_rules& out) {
  const std::uint64_t cap = swarm_rules::kMaxWindowCalls;
  x.integer("threshold", out.threshold, 1, cap);
  x.integer("min_workers", out.min_workers, 1, kMaxMinWorkers);
  x.number("window_seconds", out.window_seconds, 0, kMaxWindowSeconds);
  x.boolean("progress_aware", out.progress_aware);
  x.integer("absolute_cap", out.absolute_cap, 1, cap);
  x.integer("critical_at", out.critical_at, 0, cap);
  x.integer("max_fingerprints_per_swarm", out.max_fingerprints_per_swarm, kMinFingerprints,
            kMaxFingerprints);
  json_fields::object budget = x.member("budget");
  budget.identifier("unit", out.budget.unit, budget_rules::kMaxUnitBytes);
}

result<swarm_rules> parse_swarm_rules(const nlohmann::json& j, swarm_rules base) {
  json_fields::reader r(j, {.prefix = "swarm"});
  read_swarm_rules(r, base);
  if (status s = r.finish(); !s.ok()) return s;
  if (status s = validate(base); !s.ok()) return s;
  return base;
}

nlohmann::json to_json(const swarm_rules& r) {
  return {{"threshold", r.threshold},
          {"min_workers", r.min_workers},
          {"window_seconds", r.window_seconds},
          {"progress_aware", r.progress_aware},
          {"absolute_cap", r.absolute_cap},
          {"critical_at", r.critical_at},
          {"max_fingerprints_per_swarm", r.max_fingerprints_per_swarm},
          {"budget", {{"unit", r.budget.unit}}}};
}

}  // namespace loopguard::daemon
