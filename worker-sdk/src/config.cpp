#include "loopguard/config.hpp"

#include "loopguard/json_fields.hpp"
#include "loopguard/presets.hpp"

namespace loopguard {
namespace {

using json = nlohmann::json;
using json_fields::choice;
using json_fields::object;

constexpr std::uint32_t kMaxCount = 1000000;
constexpr std::uint32_t kMaxWindow = 1000;

void read_ladder(object x, ladder& steps) {
  x.integer("warn_at", steps.warn_at, 1, kMaxCount);
  x.integer("critical_at", steps.critical_at, 0, kMaxCount);
  x.integer("terminate_at", steps.terminate_at, 0, kMaxCount);
  if (x.ok() && steps.critical_at != 0 && steps.critical_at < steps.warn_at) {
    x.fail("critical_at", "0 (never) or at least warn_at (" + std::to_string(steps.warn_at) + ")",
           json(steps.critical_at));
  }
  if (x.ok() && steps.terminate_at != 0 && steps.terminate_at < steps.warn_at) {
    x.fail("terminate_at", "0 (never) or at least warn_at (" + std::to_string(steps.warn_at) + ")",
           json(steps.terminate_at));
  }
}

// `exact_only`: absolute_cap and reset_after_fire exist for the exact rule only.
void read_repeat(object x, repeat_rule& rule, bool exact_only) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.one_of("mode", rule.mode,
           {choice<count_mode>{"consecutive", count_mode::consecutive},
            choice<count_mode>{"window", count_mode::window},
            choice<count_mode>{"both", count_mode::both}});
  x.integer("window", rule.window, 2, kMaxWindow);
  if (exact_only) {
    x.integer("absolute_cap", rule.absolute_cap, 0, kMaxCount);
    x.boolean("reset_after_fire", rule.reset_after_fire);
    x.boolean("critical_needs_same_result", rule.critical_needs_same_result);
  }
}

void read_cycle(object x, cycle_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.integer("min_length", rule.min_length, 2, 20);
  x.integer("max_length", rule.max_length, 2, 20);
  x.boolean("count_started", rule.count_started);
  x.boolean("critical_needs_same_result", rule.critical_needs_same_result);
  if (x.ok() && rule.max_length < rule.min_length) {
    x.fail("max_length", "at least min_length (" + std::to_string(rule.min_length) + ")",
           json(rule.max_length));
  }
}

void read_similar_args(object x, similar_args_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.number("threshold", rule.threshold, 0, 100);
  x.integer("window", rule.window, 2, kMaxWindow);
  x.number("result_threshold", rule.result_threshold, 0, 100);
  x.boolean("identical_errors", rule.identical_errors);
}

void read_result(object x, result_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.integer("window", rule.window, 2, kMaxWindow);
  x.integer("min_distinct_calls", rule.min_distinct_calls, 1, kMaxWindow);
  x.boolean("same_tool", rule.same_tool);
  x.number("alike_threshold", rule.alike_threshold, 0, 100);
  x.one_of("errors", rule.count_errors,
           {choice<result_rule::errors>{"any", result_rule::errors::any},
            choice<result_rule::errors>{"unknown_tool", result_rule::errors::unknown_tool}});
}

void read_output_similarity(object x, output_similarity_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.number("threshold", rule.threshold, 0, 100);
  x.integer("history", rule.history, 1, 100);
  x.boolean("record_similar", rule.record_similar);
}

void read_content(object x, content_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.integer("chunk_size", rule.chunk_size, 4, 1000);
  x.integer("occurrences", rule.occurrences, 2, 1000);
  x.integer("max_distance", rule.max_distance, 1, 100000);
  x.integer("max_history", rule.max_history, 16, 1000000);
  if (x.ok() && rule.max_history < 2 * rule.chunk_size) {
    x.fail("max_history", "at least twice chunk_size (" + std::to_string(2 * rule.chunk_size) + ")",
           json(rule.max_history));
  }
}

void read_intent(object x, intent_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  // The phrase and one-word-line ladders (literal keys: the reader keeps the keys it read).
  x.integer("phrase_warn_at", rule.phrase_steps.warn_at, 1, kMaxCount);
  x.integer("phrase_critical_at", rule.phrase_steps.critical_at, 0, kMaxCount);
  x.integer("token_warn_at", rule.token_steps.warn_at, 1, kMaxCount);
  x.integer("token_critical_at", rule.token_steps.critical_at, 0, kMaxCount);
  for (auto [name, steps] : {std::pair{"phrase_critical_at", rule.phrase_steps},
                             std::pair{"token_critical_at", rule.token_steps}}) {
    if (x.ok() && steps.critical_at != 0 && steps.critical_at < steps.warn_at) {
      x.fail(name,
             "0 (never) or at least the warn_at beside it (" + std::to_string(steps.warn_at) + ")",
             json(steps.critical_at));
    }
  }
  x.string("phrase", rule.phrase, 64);
  x.integer("min_bytes", rule.min_bytes, 0, kMaxCount);
  x.integer("critical_min_bytes", rule.critical_min_bytes, 0, kMaxCount);
}

void read_streak(object x, streak_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
}

void read_failures(object x, failure_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.number("alike_threshold", rule.alike_threshold, 0, 100);
  x.integer("give_up_at", rule.give_up_at, 0, kMaxCount);
}

void read_retrace(object x, retrace_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.integer("window", rule.window, 2, kMaxWindow);
  x.integer("min_bytes", rule.min_bytes, 1, kMaxCount);
}

void read_limit(object x, limit_rule& rule) {
  x.boolean("enabled", rule.enabled);
  x.integer("max_iterations", rule.max_iterations, 0, std::uint64_t{1} << 40);
  x.number("max_wall_seconds", rule.max_wall_seconds, 0, 1e9);
  x.number("max_cost", rule.max_cost, 0, 1e12);
  x.integer("max_consecutive_failures", rule.max_consecutive_failures, 0, kMaxCount);
  x.number("warn_fraction", rule.warn_fraction, 0.01, 1);
}

void read_judge(object x, judge_rule& rule) {
  x.boolean("enabled", rule.enabled);
  read_ladder(x, rule.steps);
  x.integer("after_turn", rule.after_turn, 0, std::uint64_t{1} << 40);
  x.integer("every_turns", rule.every_turns, 0, kMaxCount);
  x.boolean("on_warn", rule.on_warn);
  x.number("threshold", rule.threshold, 0, 1);
  x.integer("max_events", rule.max_events, 1, 1000);
  x.integer("max_bytes", rule.max_bytes, 64, 1000000);
  x.integer("event_bytes", rule.event_bytes, 16, 100000);
}

void read_detectors(object d, manager_config& c) {
  read_repeat(d.at("exact"), c.exact, true);
  read_repeat(d.at("structural"), c.structural, false);
  read_cycle(d.at("cycle"), c.cycle);
  read_similar_args(d.at("similar_args"), c.similar_args);
  read_result(d.at("result"), c.result);
  read_output_similarity(d.at("output_similarity"), c.output_similarity);
  read_content(d.at("content"), c.content);
  read_streak(d.at("summary"), c.summary);
  read_intent(d.at("intent"), c.intent);
  read_failures(d.at("test_fix"), c.test_fix);
  read_failures(d.at("bash_cascade"), c.bash_cascade);
  read_retrace(d.at("retrace"), c.retrace);
  read_limit(d.at("limit"), c.limit);
  read_judge(d.at("judge"), c.judge);
}

void read_fingerprint(object x, fingerprint_options& f) {
  x.strings("primary_keys", f.primary_keys);
  x.strings("volatile_keys", f.volatile_keys);
  x.strings("shell_tools", f.shell_tools);
  x.strings("command_keys", f.command_keys);
  x.strings("result_volatile_keys", f.result_volatile_keys);
}

void read_escalation(object x, escalation_rule& e) {
  x.integer("terminate_after", e.terminate_after, 0, kMaxCount);
  x.boolean("reject_at_critical", e.reject_at_critical);
  x.boolean("outcome_aware", e.outcome_aware);
  x.boolean("every_firing_counts", e.every_firing_counts);
  x.boolean("repeat_nudges", e.repeat_nudges);
  x.boolean("user_message_restarts", e.user_message_restarts);
}

// A per-tool ladder. Keys not given follow the detector's own ladder (`base`): a warn_at alone
// keeps base's distance to critical_at, so {"warn_at": 8} over {3, 6} means {8, 11}.
std::optional<ladder> read_override_ladder(object t, const char* key, const ladder& base) {
  if (!t.has(key)) return std::nullopt;
  object x = t.at(key);
  const bool critical_given = x.has("critical_at");
  ladder steps = base;
  x.integer("warn_at", steps.warn_at, 1, kMaxCount);
  if (!critical_given && base.critical_at != 0 && steps.warn_at != base.warn_at) {
    const std::uint32_t gap = base.critical_at > base.warn_at ? base.critical_at - base.warn_at : 0;
    steps.critical_at = std::min(kMaxCount, steps.warn_at + gap);
  }
  read_ladder(x, steps);
  if (!x.ok()) return std::nullopt;
  return steps;
}

void read_tools(object top, manager_config& c) {
  object tools = top.at("tools");
  for (std::string_view name : top.keys("tools")) {
    object t = tools.member(name);
    tool_override o;
    t.boolean("enabled", o.enabled);
    o.exact = read_override_ladder(t, "exact", c.exact.steps);
    o.structural = read_override_ladder(t, "structural", c.structural.steps);
    o.similar_args = read_override_ladder(t, "similar_args", c.similar_args.steps);
    t.boolean("poll", o.poll);
    c.tools[std::string(name)] = o;
  }
}

json ladder_json(const ladder& l) {
  return {{"warn_at", l.warn_at}, {"critical_at", l.critical_at}, {"terminate_at", l.terminate_at}};
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
    j["critical_needs_same_result"] = r.critical_needs_same_result;
  }
  return j;
}

json streak_json(const streak_rule& r) {
  json j = ladder_json(r.steps);
  j["enabled"] = r.enabled;
  return j;
}

json failures_json(const failure_rule& r) {
  json j = ladder_json(r.steps);
  j["enabled"] = r.enabled;
  j["alike_threshold"] = r.alike_threshold;
  j["give_up_at"] = r.give_up_at;
  return j;
}

// A rule's JSON: its ladder and enabled flag, plus `extra`.
json rule_json(const ladder& steps, bool enabled, json extra) {
  extra.update(ladder_json(steps));
  extra["enabled"] = enabled;
  return extra;
}

json intent_json(const intent_rule& r) {
  return rule_json(r.steps, r.enabled,
                   {{"phrase_warn_at", r.phrase_steps.warn_at},
                    {"phrase_critical_at", r.phrase_steps.critical_at},
                    {"token_warn_at", r.token_steps.warn_at},
                    {"token_critical_at", r.token_steps.critical_at},
                    {"phrase", r.phrase},
                    {"min_bytes", r.min_bytes},
                    {"critical_min_bytes", r.critical_min_bytes}});
}

json detectors_json(const manager_config& c) {
  const auto& cy = c.cycle;
  const auto& sa = c.similar_args;
  const auto& re = c.result;
  const auto& os = c.output_similarity;
  const auto& co = c.content;
  const auto& li = c.limit;
  const auto& rt = c.retrace;
  return {{"exact", repeat_json(c.exact, true)},
          {"structural", repeat_json(c.structural, false)},
          {"cycle", rule_json(cy.steps, cy.enabled,
                              {{"min_length", cy.min_length},
                               {"max_length", cy.max_length},
                               {"count_started", cy.count_started},
                               {"critical_needs_same_result", cy.critical_needs_same_result}})},
          {"similar_args", rule_json(sa.steps, sa.enabled,
                                     {{"threshold", sa.threshold},
                                      {"window", sa.window},
                                      {"result_threshold", sa.result_threshold},
                                      {"identical_errors", sa.identical_errors}})},
          {"result", rule_json(re.steps, re.enabled,
                               {{"window", re.window},
                                {"min_distinct_calls", re.min_distinct_calls},
                                {"same_tool", re.same_tool},
                                {"alike_threshold", re.alike_threshold},
                                {"errors", re.count_errors == result_rule::errors::unknown_tool
                                               ? "unknown_tool"
                                               : "any"}})},
          {"output_similarity", rule_json(os.steps, os.enabled,
                                          {{"threshold", os.threshold},
                                           {"history", os.history},
                                           {"record_similar", os.record_similar}})},
          {"content", rule_json(co.steps, co.enabled,
                                {{"chunk_size", co.chunk_size},
                                 {"occurrences", co.occurrences},
                                 {"max_distance", co.max_distance},
                                 {"max_history", co.max_history}})},
          {"summary", streak_json(c.summary)},
          {"intent", intent_json(c.intent)},
          {"test_fix", failures_json(c.test_fix)},
          {"bash_cascade", failures_json(c.bash_cascade)},
          {"retrace",
           rule_json(rt.steps, rt.enabled, {{"window", rt.window}, {"min_bytes", rt.min_bytes}})},
          {"limit",
           {{"enabled", li.enabled},
            {"max_iterations", li.max_iterations},
            {"max_wall_seconds", li.max_wall_seconds},
            {"max_cost", li.max_cost},
            {"max_consecutive_failures", li.max_consecutive_failures},
            {"warn_fraction", li.warn_fraction}}},
          {"judge", rule_json(c.judge.steps, c.judge.enabled,
                              {{"after_turn", c.judge.after_turn},
                               {"every_turns", c.judge.every_turns},
                               {"on_warn", c.judge.on_warn},
                               {"threshold", c.judge.threshold},
                               {"max_events", c.judge.max_events},
                               {"max_bytes", c.judge.max_bytes},
                               {"event_bytes", c.judge.event_bytes}})}};
}

json tools_json(const manager_config& c) {
  json tools = json::object();
  for (const auto& [tool, o] : c.tools) {
    json t = json::object();
    if (o.enabled) t["enabled"] = *o.enabled;
    if (o.exact) t["exact"] = ladder_json(*o.exact);
    if (o.structural) t["structural"] = ladder_json(*o.structural);
    if (o.similar_args) t["similar_args"] = ladder_json(*o.similar_args);
    if (o.poll) t["poll"] = *o.poll;
    tools[tool] = t;
  }
  return tools;
}

}  // namespace

result<manager_config> parse_config(const json& doc) {
  json_fields::reader r(doc, {.name = "configuration"});
  std::string_view name = "balanced";
  r.one_of("preset", name, preset_names());
  if (!r.ok()) return r.first_error();
  manager_config c = *preset(name);
  r.one_of("mode", c.mode,
           {choice<guard_mode>{"enforce", guard_mode::enforce},
            choice<guard_mode>{"observe", guard_mode::observe}});
  read_fingerprint(r.at("fingerprint"), c.fingerprint);
  read_detectors(r.at("detectors"), c);
  read_escalation(r.at("escalation"), c.escalation);
  read_tools(r, c);
  r.any_object("swarm", c.swarm);
  if (status s = r.finish(); !s.ok()) return s;
  c.preset = std::string(name);
  return c;
}

json to_json(const manager_config& c) {
  const auto& f = c.fingerprint;
  const auto& e = c.escalation;
  return {{"preset", c.preset},
          {"mode", c.mode == guard_mode::observe ? "observe" : "enforce"},
          {"fingerprint",
           {{"primary_keys", f.primary_keys},
            {"volatile_keys", f.volatile_keys},
            {"shell_tools", f.shell_tools},
            {"command_keys", f.command_keys},
            {"result_volatile_keys", f.result_volatile_keys}}},
          {"detectors", detectors_json(c)},
          {"escalation",
           {{"terminate_after", e.terminate_after},
            {"reject_at_critical", e.reject_at_critical},
            {"outcome_aware", e.outcome_aware},
            {"every_firing_counts", e.every_firing_counts},
            {"repeat_nudges", e.repeat_nudges},
            {"user_message_restarts", e.user_message_restarts}}},
          {"tools", tools_json(c)},
          {"swarm", c.swarm}};
}

}  // namespace loopguard
