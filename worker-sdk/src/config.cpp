#include "loopguard/config.hpp"

#include "config_reader.hpp"
#include "loopguard/presets.hpp"

namespace loopguard {
namespace {

using sdk::config_reader;
using json = nlohmann::json;

constexpr std::uint32_t kMaxCount = 1000000;
constexpr std::uint32_t kMaxWindow = 1000;

void read_ladder(config_reader& r, ladder& steps) {
  r.read("warn_at", steps.warn_at, 1, kMaxCount);
  r.read("critical_at", steps.critical_at, 0, kMaxCount);
  if (r.ok() && steps.critical_at != 0 && steps.critical_at < steps.warn_at) {
    r.fail("critical_at", "must be 0 (never) or at least warn_at (" +
                              std::to_string(steps.warn_at) + "), got " +
                              std::to_string(steps.critical_at));
  }
}

// `exact_only`: absolute_cap and reset_after_fire exist for the exact rule only.
void read_repeat(config_reader r, repeat_rule& rule, bool exact_only) {
  r.read("enabled", rule.enabled);
  read_ladder(r, rule.steps);
  std::string mode = rule.mode == count_mode::consecutive ? "consecutive"
                     : rule.mode == count_mode::window    ? "window"
                                                          : "both";
  r.read("mode", mode, {"consecutive", "window", "both"});
  rule.mode = mode == "consecutive" ? count_mode::consecutive
              : mode == "window"    ? count_mode::window
                                    : count_mode::both;
  r.read("window", rule.window, 2, kMaxWindow);
  if (exact_only) {
    r.read("absolute_cap", rule.absolute_cap, 0, kMaxCount);
    r.read("reset_after_fire", rule.reset_after_fire);
  }
  r.finish();
}

void read_streak(config_reader r, streak_rule& rule) {
  r.read("enabled", rule.enabled);
  read_ladder(r, rule.steps);
  r.finish();
}

void read_detectors(config_reader r, manager_config& c) {
  read_repeat(r.child("exact"), c.exact, true);
  read_repeat(r.child("structural"), c.structural, false);
  {
    auto x = r.child("cycle");
    x.read("enabled", c.cycle.enabled);
    read_ladder(x, c.cycle.steps);
    x.read("min_length", c.cycle.min_length, 2, 20);
    x.read("max_length", c.cycle.max_length, 2, 20);
    x.read("count_started", c.cycle.count_started);
    if (x.ok() && c.cycle.max_length < c.cycle.min_length) {
      x.fail("max_length",
             "must be at least min_length (" + std::to_string(c.cycle.min_length) + ")");
    }
    x.finish();
  }
  {
    auto x = r.child("similar_args");
    x.read("enabled", c.similar_args.enabled);
    read_ladder(x, c.similar_args.steps);
    x.read("threshold", c.similar_args.threshold, 0, 100);
    x.read("window", c.similar_args.window, 2, kMaxWindow);
    x.finish();
  }
  {
    auto x = r.child("result");
    x.read("enabled", c.result.enabled);
    read_ladder(x, c.result.steps);
    x.read("window", c.result.window, 2, kMaxWindow);
    x.read("min_distinct_calls", c.result.min_distinct_calls, 1, kMaxWindow);
    x.read("same_tool", c.result.same_tool);
    x.finish();
  }
  {
    auto x = r.child("output_similarity");
    x.read("enabled", c.output_similarity.enabled);
    read_ladder(x, c.output_similarity.steps);
    x.read("threshold", c.output_similarity.threshold, 0, 100);
    x.read("history", c.output_similarity.history, 1, 100);
    x.read("record_similar", c.output_similarity.record_similar);
    x.finish();
  }
  {
    auto x = r.child("content");
    x.read("enabled", c.content.enabled);
    read_ladder(x, c.content.steps);
    x.read("chunk_size", c.content.chunk_size, 4, 1000);
    x.read("occurrences", c.content.occurrences, 2, 1000);
    x.read("max_distance", c.content.max_distance, 1, 100000);
    x.read("max_history", c.content.max_history, 16, 1000000);
    if (x.ok() && c.content.max_history < 2 * c.content.chunk_size) {
      x.fail("max_history", "must be at least twice chunk_size");
    }
    x.finish();
  }
  read_streak(r.child("summary"), c.summary);
  read_streak(r.child("test_fix"), c.test_fix);
  read_streak(r.child("bash_cascade"), c.bash_cascade);
  {
    auto x = r.child("limit");
    x.read("enabled", c.limit.enabled);
    x.read("max_iterations", c.limit.max_iterations, 0, UINT64_C(1) << 40);
    x.read("max_wall_seconds", c.limit.max_wall_seconds, 0, 1e9);
    x.read("max_cost", c.limit.max_cost, 0, 1e12);
    x.read("max_consecutive_failures", c.limit.max_consecutive_failures, 0, kMaxCount);
    x.read("warn_fraction", c.limit.warn_fraction, 0.01, 1);
    x.finish();
  }
  r.finish();
}

// A per-tool ladder; keys not given keep the detector's own value (`base`).
// A per-tool ladder. Keys not given follow the detector's own ladder (`base`): a warn_at alone
// keeps base's distance to critical_at, so {"warn_at": 8} over {3, 6} means {8, 11}.
std::optional<ladder> read_override_ladder(config_reader& r, const char* key, const ladder& base) {
  const json* v = r.find(key);
  if (v == nullptr) return std::nullopt;
  const bool critical_given = v->is_object() && v->contains("critical_at");
  auto x = r.child(key);
  ladder steps = base;
  x.read("warn_at", steps.warn_at, 1, kMaxCount);
  if (!critical_given && base.critical_at != 0 && steps.warn_at != base.warn_at) {
    const std::uint32_t gap = base.critical_at > base.warn_at ? base.critical_at - base.warn_at : 0;
    steps.critical_at = std::min(kMaxCount, steps.warn_at + gap);
  }
  read_ladder(x, steps);
  x.finish();
  return steps;
}

json ladder_json(const ladder& l) {
  return {{"warn_at", l.warn_at}, {"critical_at", l.critical_at}};
}

json repeat_json(const repeat_rule& r, bool exact_only) {
  json j = ladder_json(r.steps);
  j["enabled"] = r.enabled;
  j["mode"] = r.mode == count_mode::consecutive ? "consecutive"
              : r.mode == count_mode::window    ? "window"
                                                : "both";
  j["window"] = r.window;
  if (exact_only) {
    j["absolute_cap"] = r.absolute_cap;
    j["reset_after_fire"] = r.reset_after_fire;
  }
  return j;
}

json streak_json(const streak_rule& r) {
  json j = ladder_json(r.steps);
  j["enabled"] = r.enabled;
  return j;
}

}  // namespace

std::optional<std::string> parse_config(const json& doc, manager_config& out) {
  std::string error;
  config_reader top(doc, "", &error);
  if (!error.empty()) return error;

  std::string name = "balanced";
  std::set<std::string> names;
  for (auto n : preset_names()) names.insert(std::string(n));
  top.read("preset", name, names);
  if (!error.empty()) return error;
  manager_config c = *preset(name);

  {
    auto f = top.child("fingerprint");
    f.read("primary_keys", c.fingerprint.primary_keys);
    f.read("volatile_keys", c.fingerprint.volatile_keys);
    f.read("shell_tools", c.fingerprint.shell_tools);
    f.read("command_keys", c.fingerprint.command_keys);
    f.finish();
  }
  read_detectors(top.child("detectors"), c);
  {
    auto e = top.child("escalation");
    e.read("terminate_after", c.escalation.terminate_after, 0, kMaxCount);
    e.read("reject_at_critical", c.escalation.reject_at_critical);
    e.read("outcome_aware", c.escalation.outcome_aware);
    e.read("every_firing_counts", c.escalation.every_firing_counts);
    e.read("repeat_nudges", c.escalation.repeat_nudges);
    e.finish();
  }
  if (const json* tools = top.find("tools"); tools != nullptr && error.empty()) {
    if (!tools->is_object()) {
      top.fail("tools", "must be an object of tool name -> overrides");
    } else {
      for (const auto& [tool, value] : tools->items()) {
        config_reader t(value, "tools." + tool, &error);
        tool_override o;
        if (t.find("enabled") != nullptr) {
          bool enabled = true;
          t.read("enabled", enabled);
          o.enabled = enabled;
        }
        o.exact = read_override_ladder(t, "exact", c.exact.steps);
        o.structural = read_override_ladder(t, "structural", c.structural.steps);
        o.similar_args = read_override_ladder(t, "similar_args", c.similar_args.steps);
        t.finish();
        if (!error.empty()) return error;
        c.tools[tool] = o;
      }
    }
  }
  if (const json* swarm = top.find("swarm"); swarm != nullptr && error.empty()) {
    if (!swarm->is_object()) {
      top.fail("swarm", "must be an object");
    } else {
      c.swarm = *swarm;
    }
  }
  top.finish();
  if (!error.empty()) return error;
  c.preset = name;
  out = std::move(c);
  return std::nullopt;
}

json to_json(const manager_config& c) {
  json d;
  d["exact"] = repeat_json(c.exact, true);
  d["structural"] = repeat_json(c.structural, false);
  d["cycle"] = ladder_json(c.cycle.steps);
  d["cycle"]["enabled"] = c.cycle.enabled;
  d["cycle"]["min_length"] = c.cycle.min_length;
  d["cycle"]["max_length"] = c.cycle.max_length;
  d["cycle"]["count_started"] = c.cycle.count_started;
  d["similar_args"] = ladder_json(c.similar_args.steps);
  d["similar_args"]["enabled"] = c.similar_args.enabled;
  d["similar_args"]["threshold"] = c.similar_args.threshold;
  d["similar_args"]["window"] = c.similar_args.window;
  d["result"] = ladder_json(c.result.steps);
  d["result"]["enabled"] = c.result.enabled;
  d["result"]["window"] = c.result.window;
  d["result"]["min_distinct_calls"] = c.result.min_distinct_calls;
  d["result"]["same_tool"] = c.result.same_tool;
  d["output_similarity"] = ladder_json(c.output_similarity.steps);
  d["output_similarity"]["enabled"] = c.output_similarity.enabled;
  d["output_similarity"]["threshold"] = c.output_similarity.threshold;
  d["output_similarity"]["history"] = c.output_similarity.history;
  d["output_similarity"]["record_similar"] = c.output_similarity.record_similar;
  d["content"] = ladder_json(c.content.steps);
  d["content"]["enabled"] = c.content.enabled;
  d["content"]["chunk_size"] = c.content.chunk_size;
  d["content"]["occurrences"] = c.content.occurrences;
  d["content"]["max_distance"] = c.content.max_distance;
  d["content"]["max_history"] = c.content.max_history;
  d["summary"] = streak_json(c.summary);
  d["test_fix"] = streak_json(c.test_fix);
  d["bash_cascade"] = streak_json(c.bash_cascade);
  d["limit"] = {{"enabled", c.limit.enabled},
                {"max_iterations", c.limit.max_iterations},
                {"max_wall_seconds", c.limit.max_wall_seconds},
                {"max_cost", c.limit.max_cost},
                {"max_consecutive_failures", c.limit.max_consecutive_failures},
                {"warn_fraction", c.limit.warn_fraction}};
  json j;
  j["preset"] = c.preset;
  j["fingerprint"] = {{"primary_keys", c.fingerprint.primary_keys},
                      {"volatile_keys", c.fingerprint.volatile_keys},
                      {"shell_tools", c.fingerprint.shell_tools},
                      {"command_keys", c.fingerprint.command_keys}};
  j["detectors"] = d;
  j["escalation"] = {{"terminate_after", c.escalation.terminate_after},
                     {"reject_at_critical", c.escalation.reject_at_critical},
                     {"outcome_aware", c.escalation.outcome_aware},
                     {"every_firing_counts", c.escalation.every_firing_counts},
                     {"repeat_nudges", c.escalation.repeat_nudges}};
  j["tools"] = json::object();
  for (const auto& [tool, o] : c.tools) {
    json t = json::object();
    if (o.enabled) t["enabled"] = *o.enabled;
    if (o.exact) t["exact"] = ladder_json(*o.exact);
    if (o.structural) t["structural"] = ladder_json(*o.structural);
    if (o.similar_args) t["similar_args"] = ladder_json(*o.similar_args);
    j["tools"][tool] = t;
  }
  j["swarm"] = c.swarm;
  return j;
}

}  // namespace loopguard
