#include "state/swarm_rules.hpp"

#include "state/handoff_cycles.hpp"

#include <algorithm>
#include <string>

namespace loopguard::daemon {
namespace {

constexpr std::uint64_t kMaxMinWorkers = 100000;
constexpr double kMaxWindowSeconds = 30.0 * 24 * 3600;  // 30 days
constexpr std::uint64_t kMinFingerprints = 16;
constexpr std::uint64_t kMaxFingerprints = 100000000;
constexpr std::uint64_t kMaxBudgetTokens = 1'000'000'000'000'000;  // 1e15
constexpr double kMaxBudgetAmount = 1e15;
constexpr double kMaxTerminateAt = 1000;
constexpr std::uint64_t kMaxHandoffPeriod = 8;
constexpr std::uint64_t kMaxHandoffRounds = 100;

std::string range(std::uint64_t lo, std::uint64_t hi) {
  return "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
}

void read_budget_cap(json_fields::object x, budget_cap& out) {
  x.identifier("unit", out.unit, budget_cap::kMaxUnitBytes);
  x.integer("tokens", out.tokens, 0, kMaxBudgetTokens);
  x.number("amount", out.amount, 0, kMaxBudgetAmount);
  x.number("warn_fraction", out.warn_fraction, 0, 1);
  x.number("terminate_at", out.terminate_at, 0, kMaxTerminateAt);
}

status validate_cap(const budget_cap& c, const std::string& path) {
  using json_fields::field_error;
  using nlohmann::json;
  if (!(c.warn_fraction > 0) || c.warn_fraction > 1) {
    return field_error(path + ".warn_fraction", "a number in (0, 1]", json(c.warn_fraction));
  }
  if (c.terminate_at != 0 && (c.terminate_at < 1 || c.terminate_at > kMaxTerminateAt)) {
    return field_error(path + ".terminate_at", "0 (never) or a number in 1..1000",
                       json(c.terminate_at));
  }
  return {};
}

status validate_handoff(const handoff_rules& h) {
  using json_fields::field_error;
  using nlohmann::json;
  if (h.max_period < 2 || h.max_period > kMaxHandoffPeriod) {
    return field_error("swarm.handoff.max_period", range(2, kMaxHandoffPeriod), json(h.max_period));
  }
  if (h.warn_at < 2 || h.warn_at > kMaxHandoffRounds) {
    return field_error("swarm.handoff.warn_at", range(2, kMaxHandoffRounds), json(h.warn_at));
  }
  if (h.critical_at != 0 && (h.critical_at <= h.warn_at || h.critical_at > kMaxHandoffRounds)) {
    return field_error("swarm.handoff.critical_at",
                       "0 (never) or " + range(h.warn_at + 1, kMaxHandoffRounds),
                       json(h.critical_at));
  }
  if (h.max_period * std::max(h.warn_at, h.critical_at) > handoff_log::kMaxKept) {
    return field_error("swarm.handoff.max_period",
                       "max_period x max(warn_at, critical_at) of at most " +
                           std::to_string(handoff_log::kMaxKept) + " hand-offs",
                       json(h.max_period));
  }
  return {};
}

nlohmann::json cap_json(const budget_cap& c) {
  return {{"unit", c.unit},
          {"tokens", c.tokens},
          {"amount", c.amount},
          {"warn_fraction", c.warn_fraction},
          {"terminate_at", c.terminate_at}};
}

nlohmann::json budget_json(const budget_rules& b) {
  nlohmann::json j = cap_json(b.base);
  if (!b.prefixes.empty()) {
    nlohmann::json& p = j["prefixes"] = nlohmann::json::object();
    for (const auto& [prefix, cap] : b.prefixes) p[prefix] = cap_json(cap);
  }
  return j;
}

}  // namespace

const budget_cap& budget_rules::of(std::string_view swarm) const {
  const budget_cap* best = &base;
  std::size_t longest = 0;
  for (const auto& [prefix, cap] : prefixes) {
    if (swarm.starts_with(prefix) && (best == &base || prefix.size() > longest)) {
      best = &cap;
      longest = prefix.size();
    }
  }
  return *best;
}

status validate(const swarm_rules& r) {
  using json_fields::field_error;
  using nlohmann::json;
  if (r.max_window_calls < 1 || r.max_window_calls > swarm_rules::kMaxWindowCallsLimit) {
    return field_error("swarm.max_window_calls", range(1, swarm_rules::kMaxWindowCallsLimit),
                       json(r.max_window_calls));
  }
  const auto calls_cap = r.max_window_calls;
  if (r.threshold < 1 || r.threshold > calls_cap) {
    return field_error("swarm.threshold", range(1, calls_cap), json(r.threshold));
  }
  if (r.min_workers < 1 || r.min_workers > kMaxMinWorkers) {
    return field_error("swarm.min_workers", range(1, kMaxMinWorkers), json(r.min_workers));
  }
  if (!(r.window_seconds > 0) || r.window_seconds > kMaxWindowSeconds) {
    return field_error("swarm.window_seconds", "a number in (0, 2592000]", json(r.window_seconds));
  }
  if (r.absolute_cap < r.threshold || r.absolute_cap > calls_cap) {
    return field_error("swarm.absolute_cap",
                       "an integer in threshold (" + std::to_string(r.threshold) + ").." +
                           std::to_string(calls_cap),
                       json(r.absolute_cap));
  }
  if (r.critical_at != 0 && (r.critical_at <= r.threshold || r.critical_at > calls_cap)) {
    return field_error("swarm.critical_at", "0 (never) or " + range(r.threshold + 1, calls_cap),
                       json(r.critical_at));
  }
  if (r.max_fingerprints_per_swarm < kMinFingerprints ||
      r.max_fingerprints_per_swarm > kMaxFingerprints) {
    return field_error("swarm.max_fingerprints_per_swarm",
                       range(kMinFingerprints, kMaxFingerprints),
                       json(r.max_fingerprints_per_swarm));
  }
  if (status s = validate_handoff(r.handoff); !s.ok()) return s;
  if (status s = validate_cap(r.budget.base, "swarm.budget"); !s.ok()) return s;
  if (r.budget.prefixes.size() > budget_rules::kMaxPrefixes) {
    return field_error("swarm.budget.prefixes",
                       "at most " + std::to_string(budget_rules::kMaxPrefixes) + " prefixes",
                       json(r.budget.prefixes.size()));
  }
  for (const auto& [prefix, cap] : r.budget.prefixes) {
    if (status s = validate_cap(cap, "swarm.budget.prefixes." + prefix); !s.ok()) return s;
  }
  return {};
}

void read_swarm_rules(json_fields::object x, swarm_rules& out) {
  // validate() checks these against max_window_calls
  const std::uint64_t calls_cap = swarm_rules::kMaxWindowCallsLimit;
  x.integer("threshold", out.threshold, 0, calls_cap);
  x.integer("min_workers", out.min_workers, 1, kMaxMinWorkers);
  x.number("window_seconds", out.window_seconds, 0, kMaxWindowSeconds);
  x.boolean("progress_aware", out.progress_aware);
  x.integer("absolute_cap", out.absolute_cap, 0, calls_cap);
  x.integer("critical_at", out.critical_at, 0, calls_cap);
  x.integer("max_fingerprints_per_swarm", out.max_fingerprints_per_swarm, kMinFingerprints,
            kMaxFingerprints);
  x.integer("max_window_calls", out.max_window_calls, 1, calls_cap);
  json_fields::object handoff = x.member("handoff");
  handoff.integer("warn_at", out.handoff.warn_at, 2, kMaxHandoffRounds);
  handoff.integer("critical_at", out.handoff.critical_at, 0, kMaxHandoffRounds);
  handoff.integer("max_period", out.handoff.max_period, 2, kMaxHandoffPeriod);
  json_fields::object budget = x.member("budget");
  read_budget_cap(budget, out.budget.base);
  for (const auto prefix : budget.keys("prefixes")) {
    budget_cap cap = out.budget.base;  // what an override does not say, the base says
    auto it = std::find_if(out.budget.prefixes.begin(), out.budget.prefixes.end(),
                           [&](const auto& p) { return p.first == prefix; });
    if (it != out.budget.prefixes.end()) cap = it->second;
    read_budget_cap(budget.at("prefixes").member(prefix), cap);
    if (it != out.budget.prefixes.end()) {
      it->second = cap;
    } else {
      out.budget.prefixes.emplace_back(std::string(prefix), cap);
    }
  }
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
          {"max_window_calls", r.max_window_calls},
          {"budget", budget_json(r.budget)},
          {"handoff",
           {{"warn_at", r.handoff.warn_at},
            {"critical_at", r.handoff.critical_at},
            {"max_period", r.handoff.max_period}}}};
}

}  // namespace loopguard::daemon
