#include "state/swarm_rules.hpp"

#include <cmath>
#include <limits>
#include <string_view>
#include "loopguard/json_input.hpp"

namespace loopguard::daemon {
namespace {

constexpr std::uint64_t kMaxMinWorkers = 100000;
constexpr double kMaxWindowSeconds = 30.0 * 24 * 3600;  // 30 days
constexpr std::uint64_t kMinFingerprints = 16;
constexpr std::uint64_t kMaxFingerprints = 100000000;

std::string range_error(std::string_view key, std::string_view range, const nlohmann::json& v) {
  return "swarm." + std::string(key) + ": must be " + std::string(range) + ", got " +
         json_input::dump(v);
}

// Reads an unsigned integer in [lo, hi] from j[key] into out; absent keys are left alone.
std::optional<std::string> read_uint(const nlohmann::json& j, std::string_view key,
                                     std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  const std::string range = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  std::uint64_t v = 0;
  if (it->is_number_unsigned()) {
    v = it->get<std::uint64_t>();
  } else if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
    v = static_cast<std::uint64_t>(it->get<std::int64_t>());
  } else if (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>() &&
             it->get<double>() >= 0 && it->get<double>() < 1e18) {
    v = static_cast<std::uint64_t>(it->get<double>());
  } else {
    return range_error(key, range, *it);
  }
  if (v < lo || v > hi) return range_error(key, range, *it);
  out = v;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const swarm_rules& r) {
  const auto cap = swarm_rules::kMaxWindowCalls;
  const auto num = [](auto v) { return nlohmann::json(v); };
  if (r.threshold < 1 || r.threshold > cap) {
    return range_error("threshold", "an integer in 1.." + std::to_string(cap), num(r.threshold));
  }
  if (r.min_workers < 1 || r.min_workers > kMaxMinWorkers) {
    return range_error("min_workers", "an integer in 1.." + std::to_string(kMaxMinWorkers),
                       num(r.min_workers));
  }
  if (!(r.window_seconds > 0) || r.window_seconds > kMaxWindowSeconds) {
    return range_error("window_seconds", "a number of seconds in (0, 2592000]",
                       num(r.window_seconds));
  }
  if (r.absolute_cap < r.threshold || r.absolute_cap > cap) {
    return range_error(
        "absolute_cap",
        "an integer in threshold (" + std::to_string(r.threshold) + ").." + std::to_string(cap),
        num(r.absolute_cap));
  }
  if (r.critical_at != 0 && (r.critical_at <= r.threshold || r.critical_at > cap)) {
    return range_error("critical_at",
                       "0 (never) or an integer in threshold+1 (" +
                           std::to_string(r.threshold + 1) + ").." + std::to_string(cap),
                       num(r.critical_at));
  }
  if (r.max_fingerprints_per_swarm < kMinFingerprints ||
      r.max_fingerprints_per_swarm > kMaxFingerprints) {
    return range_error("max_fingerprints_per_swarm",
                       "an integer in " + std::to_string(kMinFingerprints) + ".." +
                           std::to_string(kMaxFingerprints),
                       num(r.max_fingerprints_per_swarm));
  }
  return std::nullopt;
}

std::optional<std::string> parse_swarm_rules(const nlohmann::json& j, swarm_rules& out) {
  if (!j.is_object()) return "swarm: must be an object, got " + json_input::dump(j);
  static constexpr std::string_view kKeys[] = {"threshold",
                                               "min_workers",
                                               "window_seconds",
                                               "progress_aware",
                                               "absolute_cap",
                                               "critical_at",
                                               "max_fingerprints_per_swarm"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (auto k : kKeys) known = known || key == k;
    if (!known) {
      return "swarm." + key +
             ": unknown key (known: threshold, min_workers, window_seconds, progress_aware, "
             "absolute_cap, critical_at, max_fingerprints_per_swarm)";
    }
  }
  swarm_rules r = out;
  std::uint64_t v = 0;
  // Each key's own range here, so a mistyped or negative value is reported with it; the
  // ranges that depend on other keys (absolute_cap, critical_at) are checked by validate().
  const std::uint64_t cap = swarm_rules::kMaxWindowCalls;
  if (v = r.threshold; auto e = read_uint(j, "threshold", 1, cap, v)) return e;
  r.threshold = static_cast<std::uint32_t>(v);
  if (v = r.min_workers; auto e = read_uint(j, "min_workers", 1, kMaxMinWorkers, v)) return e;
  r.min_workers = static_cast<std::uint32_t>(v);
  if (v = r.absolute_cap; auto e = read_uint(j, "absolute_cap", 1, cap, v)) return e;
  r.absolute_cap = static_cast<std::uint32_t>(v);
  if (v = r.critical_at; auto e = read_uint(j, "critical_at", 0, cap, v)) return e;
  r.critical_at = static_cast<std::uint32_t>(v);
  if (v = r.max_fingerprints_per_swarm;
      auto e = read_uint(j, "max_fingerprints_per_swarm", kMinFingerprints, kMaxFingerprints, v)) {
    return e;
  }
  r.max_fingerprints_per_swarm = static_cast<std::size_t>(v);
  if (const auto it = j.find("window_seconds"); it != j.end()) {
    if (!it->is_number()) {
      return range_error("window_seconds", "a number of seconds in (0, 2592000]", *it);
    }
    r.window_seconds = it->get<double>();
  }
  if (const auto it = j.find("progress_aware"); it != j.end()) {
    if (!it->is_boolean()) return range_error("progress_aware", "true or false", *it);
    r.progress_aware = it->get<bool>();
  }
  if (auto e = validate(r)) return e;
  out = r;
  return std::nullopt;
}

nlohmann::json to_json(const swarm_rules& r) {
  return {{"threshold", r.threshold},
          {"min_workers", r.min_workers},
          {"window_seconds", r.window_seconds},
          {"progress_aware", r.progress_aware},
          {"absolute_cap", r.absolute_cap},
          {"critical_at", r.critical_at},
          {"max_fingerprints_per_swarm", r.max_fingerprints_per_swarm}};
}

}  // namespace loopguard::daemon
