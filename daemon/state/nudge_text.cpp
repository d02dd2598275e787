#include "state/nudge_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace loopguard::daemon {
namespace {

std::string window_words(double seconds) {
  if (seconds >= 3600 && std::fmod(seconds, 3600) == 0) {
    return std::to_string(static_cast<long long>(seconds / 3600)) + " h";
  }
  if (seconds >= 60 && std::fmod(seconds, 60) == 0) {
    return std::to_string(static_cast<long long>(seconds / 60)) + " min";
  }
  return std::to_string(static_cast<long long>(std::ceil(seconds))) + " s";
}

std::string lifted_nudge(const nudge_facts& f) {
  std::string out = "[Loopguard] The swarm-wide dead end on `";
  out.append(f.tool).append("` looks cleared: ").append(std::to_string(f.calls));
  out += f.calls == 1 ? " repeated call" : " repeated calls";
  out.append(" in the last ").append(window_words(f.window_seconds));
  out += ", fewer than it took to declare it. It may be tried again if something has changed.";
  return out;
}

std::string token_words(std::uint64_t n) {
  char buf[32];
  const auto d = static_cast<double>(n);
  if (n < 1000) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
  } else if (n < 10000) {
    std::snprintf(buf, sizeof buf, "%.1fk", d / 1e3);
  } else if (n < 1000000) {
    std::snprintf(buf, sizeof buf, "%.0fk", d / 1e3);
  } else if (n < 10000000) {
    std::snprintf(buf, sizeof buf, "%.1fM", d / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fM", d / 1e6);
  }
  return std::string(buf) + (n == 1 ? " token" : " tokens");
}

std::string amount_words(double amount, std::string_view unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, amount >= 0.01 || amount == 0 ? "%.2f" : "%.2g", amount);
  if (unit == "USD") return "$" + std::string(buf);
  std::string out(buf);
  if (!unit.empty()) out.append(" ").append(unit);
  return out;
}

}  // namespace

std::string cost_words(const protocol::cost& c, std::string_view unit) {
  std::string out;
  if (c.tokens > 0) out = token_words(c.tokens);
  if (c.amount > 0) {
    if (!out.empty()) out += ", ";
    out += amount_words(c.amount, unit);
  }
  return out;
}

std::string budget_nudge(severity level, const protocol::cost& spent, const budget_cap& cap) {
  double used = 0;
  std::string parts;
  if (cap.tokens > 0) {
    used = static_cast<double>(spent.tokens) / static_cast<double>(cap.tokens);
    parts = token_words(spent.tokens) + " of " + token_words(cap.tokens);
  }
  if (cap.amount > 0) {
    used = std::max(used, spent.amount / cap.amount);
    if (!parts.empty()) parts += ", ";
    parts += amount_words(spent.amount, cap.unit) + " of " + amount_words(cap.amount, cap.unit);
  }
  const std::string percent = std::to_string(static_cast<long long>(std::floor(used * 100)));
  const std::string usage = "this swarm has used " + percent + "% of its budget (" + parts + ").";
  switch (level) {
    case severity::terminate:
      return "[Loopguard TERMINATE] Swarm budget overrun: " + usage +
             " Stop now: no worker of this swarm may go on.";
    case severity::critical:
      return "[Loopguard CRITICAL] Swarm budget spent: " + usage +
             " Every tool call of this swarm is refused from now on. Report what you have and "
             "stop.";
    default:
      return "[Loopguard] Swarm budget: " + usage +
             " Wrap up: finish the task or report what you have; avoid open-ended exploration "
             "and retries. The budget belongs to the swarm: workers it starts share it.";
  }
}

std::string handoff_nudge(severity level, const handoff_cycle& c, std::string_view unit) {
  std::string ring;
  for (const auto& w : c.workers) ring += w + " \u2192 ";
  ring += c.workers.empty() ? std::string() : c.workers.front();
  if (level == severity::none) {
    return "[Loopguard] The hand-off loop " + ring +
           " looks broken: the last hand-off did not repeat it. Go on with the work.";
  }
  std::string out = level >= severity::critical ? "[Loopguard CRITICAL] Hand-off loop: "
                                                : "[Loopguard] Hand-off loop: ";
  out += "the same work went around " + ring + " " + std::to_string(c.rounds) + " times (" +
         std::to_string(c.calls) + " hand-offs via `" + c.tool + "`) without changing";
  if (const std::string spent = cost_words(c.spent, unit); !spent.empty()) {
    out += " (" + spent + " spent on these hand-offs)";
  }
  if (level >= severity::critical) {
    out +=
        ". Do not hand it back again: whoever holds it now finishes it, or reports what "
        "blocks it to a person.";
  } else {
    out +=
        ". Stop passing it back: one of you takes it on and finishes it, or reports what "
        "blocks it.";
  }
  return out;
}

std::string global_nudge(severity level, const nudge_facts& f) {
  if (level == severity::none) return lifted_nudge(f);
  std::string out = level >= severity::critical ? "[Loopguard CRITICAL] Swarm-wide dead end: "
                                                : "[Loopguard] Swarm-wide dead end: ";
  std::string who = std::to_string(f.workers);
  who += f.workers == 1 ? " worker" : " workers";
  const char* what = f.kind == "exact" ? "with identical arguments" : "with equivalent arguments";
  out.append("`").append(f.tool).append("` was called ").append(std::to_string(f.calls));
  out.append(" times ").append(what).append(" by ").append(who);
  out.append(" of this swarm in the last ").append(window_words(f.window_seconds));
  if (const std::string burned = cost_words(f.wasted, f.unit); !burned.empty()) {
    out.append(" (").append(burned).append(" burned on it)");
  }
  if (f.by_cap) {
    out +=
        ". Its results keep changing, but this volume means the swarm is spending most of its "
        "effort here. Coordinate: let one worker own this call and the others move on.";
    return out;
  }
  out += ", and it keeps producing the same result. Nobody is getting anywhere with it. ";
  if (level >= severity::critical) {
    out +=
        "Stop calling it with these arguments now. Say what is blocking you, then take a "
        "different route; the goal itself may need to be questioned.";
  } else {
    out +=
        "Do not retry it as it is: try a different tool or strategy, or report what blocks "
        "the task.";
  }
  return out;
}

}  // namespace loopguard::daemon
