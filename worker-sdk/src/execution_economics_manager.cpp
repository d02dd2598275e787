#include "loopguard/execution_economics_manager.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "call_history.hpp"
#include "command_kinds.hpp"
#include "detectors/content_loop.hpp"
#include "detectors/cycle.hpp"
#include "detectors/failure_signature.hpp"
#include "detectors/intent.hpp"
#include "detectors/limits.hpp"
#include "detectors/output_similarity.hpp"
#include "detectors/repeat_chain.hpp"
#include "detectors/result.hpp"
#include "detectors/retrace.hpp"
#include "detectors/streaks.hpp"
#include "escalation.hpp"
#include "global_verdicts.hpp"
#include "judge_state.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"
#include "nudges.hpp"
#include "pending_calls.hpp"

namespace loopguard {

using sdk::finding;

namespace {

// Distinct calls whose totals are remembered for the absolute cap; past it the totals restart
// (a run of weeks must not grow without bound).
constexpr std::size_t kMaxTotals = 100000;

std::size_t history_capacity(const manager_config& c) {
  std::size_t cap = 64;
  for (std::size_t w : {std::size_t{c.exact.window}, std::size_t{c.structural.window},
                        std::size_t{c.similar_args.window}, std::size_t{c.result.window}}) {
    cap = std::max(cap, w + 1);
  }
  return std::max<std::size_t>(cap, std::size_t{c.cycle.max_length} * 8);
}

// The event before: a call that follows a tool_call or a text joins its turn (the parallel calls
// of one turn), any other starts one. A refused call ends its turn: its refusal is the answer.
enum class last_event { none, text, tool_call, tool_result, user, refusal };

// Everything one run accumulates. reset() replaces it whole, so no member can survive a reset
// by being forgotten.
struct run_state {
  explicit run_state(const manager_config& c)
      : history(history_capacity(c)),
        esc(c.escalation),
        similar_outputs(c.output_similarity),
        content(c.content),
        limits(c.limit),
        judge(c.judge) {}

  sdk::call_history history;
  sdk::escalation esc;
  sdk::output_similarity_detector similar_outputs;
  sdk::content_loop_detector content;
  sdk::safety_limits limits;
  sdk::judge_state judge;
  std::unordered_map<std::uint64_t, std::uint32_t> totals;  // calls per exact fingerprint
  sdk::streak text_turns;
  sdk::failure_streak test_failures, shell_failures;
  sdk::retrace_state retraced;  // results seen again since the last progress
  std::uint32_t consecutive_failures = 0;
  std::size_t failed_turn = 0;  // the turn of the last failed result's call (0: none, unknown)
  double cost = 0;
  std::optional<double> started_at;
  bool streaming = false;
  std::string streamed;              // intent: the reply streamed so far (its newer part)
  std::size_t streamed_checked = 0;  // streamed's size at its last intent check
  std::string chunk_tail;            // an incomplete UTF-8 sequence at the end of the last chunk
  last_event last = last_event::none;
  std::size_t next_index = 0;
  manager_stats stats;
  sdk::pending_calls pending;  // calls not yet sent to the call sink
};

// The loops a rule looked at on one event: one loop (the call's or the error's fingerprint) or,
// without an identity, every loop of the rule.
struct watched {
  detector_id detector;
  std::optional<std::uint64_t> identity;
};

// What a result is the outcome of: its call, or for a result that answers no call, what the
// tool name says.
struct outcome_of {
  bool test_run = false, shell = false, file_op = false;
  std::string_view command;  // the command line of a shell call, else the tool
};

detection to_detection(const finding& f, severity level, std::uint32_t occurrence,
                       sdk::nudge_text&& text) {
  detection d;
  d.detector = f.detector;
  d.level = level;
  d.count = f.count;
  d.confidence = f.confidence;
  d.loop_start = f.loop_start;
  d.occurrence = occurrence;
  d.tool = f.tool;
  d.message = std::move(text.message);
  d.suggestion = std::move(text.suggestion);
  return d;
}

void strongest_first(std::vector<detection>& detections) {
  std::stable_sort(detections.begin(), detections.end(),
                   [](const detection& a, const detection& b) {
                     if (a.level != b.level) return a.level > b.level;
                     return a.confidence > b.confidence;
                   });
}

}  // namespace

// The settings, the caches that do not depend on the run, the clock and the override; the run
// itself is the run_state base.
struct ExecutionEconomicsManager::impl : run_state {
  explicit impl(manager_config c) : run_state(c), config(std::move(c)), fp(config.fingerprint) {}

  manager_config config;
  fingerprinter fp;
  struct tool_kind {
    bool mutating, test;
  };
  // What each tool name is, worked out once per name (agents use a handful of tools).
  std::unordered_map<std::string, tool_kind> tool_kinds;

  const tool_kind& kind_of(std::string_view tool) {
    auto it = tool_kinds.find(std::string(tool));
    if (it != tool_kinds.end()) return it->second;
    if (tool_kinds.size() >= kMaxTotals) tool_kinds.clear();
    return tool_kinds
        .emplace(std::string(tool), tool_kind{sdk::is_mutating_tool(tool), sdk::is_test_tool(tool)})
        .first->second;
  }

  ExecutionEconomicsManager::clock clock;
  ExecutionEconomicsManager::verdict_override override_fn;
  ExecutionEconomicsManager::call_sink sink;
  judge_fn judge_hook;
  sdk::global_verdicts globals;  // the swarm's, not the run's: reset() keeps them

  void clear_run() { static_cast<run_state&>(*this) = run_state(config); }

  std::size_t begin_event() {
    ++stats.checks;
    if (clock && !started_at) started_at = clock();
    return next_index++;
  }

  // The index a verdict that judges no event carries (add_cost): the last event's.
  std::size_t last_index() const { return next_index == 0 ? 0 : next_index - 1; }

  void new_turn() { ++stats.turns; }

  // Failures in a row for the limit: the failed results of one turn's parallel calls are one
  // failure; any success resets the count.
  void count_failure(bool ok, const sdk::call_record* rec) {
    const std::size_t turn = rec != nullptr ? rec->turn : 0;
    if (ok) {
      consecutive_failures = 0;
      failed_turn = 0;
      return;
    }
    if (turn == 0 || turn != failed_turn) ++consecutive_failures;
    if (turn != 0) failed_turn = turn;  // an unpaired failure between keeps the turn known
  }

  void add_limits(std::vector<finding>& out, std::size_t index) {
    sdk::safety_limits::usage u;
    u.turns = stats.turns;
    u.elapsed = (clock && started_at) ? clock() - *started_at : 0;
    u.cost = cost;
    u.consecutive_failures = consecutive_failures;
    for (auto& f : limits.check(u, index)) out.push_back(std::move(f));
  }

  const tool_override* override_for(std::string_view tool) const {
    auto it = config.tools.find(tool);
    return it == config.tools.end() ? nullptr : &it->second;
  }

  // A tool whose call rules are off, or that polls (its repeats are allowed): `retrace` leaves
  // its results alone too.
  bool polls_or_off(std::string_view tool) const {
    const tool_override* ov = override_for(tool);
    return ov != nullptr && ((ov->enabled && !*ov->enabled) || (ov->poll && *ov->poll));
  }

  // A rule looked at this event: its finding goes to the verdict, or, when it has none, the
  // agent has left the loops it watched and their episodes are over. True when it reported.
  bool report(std::vector<finding>& out, std::optional<finding>&& f, watched loops) {
    if (f) {
      out.push_back(std::move(*f));
      return true;
    }
    if (loops.identity) {
      esc.quiet(loops.detector, *loops.identity);
    } else {
      esc.quiet_all(loops.detector);
    }
    return false;
  }

  // A streak rule's step: the streak moves on; a streak still too short says nothing either way.
  template <class State>
  void report(std::vector<finding>& out, sdk::streak_step<State>&& step, State& state,
              detector_id d) {
    state = std::move(step.next);
    if (step.found || step.ended) report(out, std::move(step.found), {d, std::nullopt});
  }

  // The judge hook, when one is set: remembers the event for its digest.
  void note(std::size_t index, std::string_view kind, std::string_view tool, std::string_view text,
            bool ok = true) {
    if (judge_hook && config.judge.enabled) judge.note(index, kind, tool, text, ok);
  }

  // Asks the judge when it is due (cadence, or a rule fired on this event); an answer above the
  // threshold is a `judge` finding. A judge that throws or answers nonsense is counted, not
  // believed.
  void maybe_judge(std::vector<finding>& out, std::size_t index) {
    if (!judge_hook || !config.judge.enabled) return;
    const std::string_view why = judge.due(stats.turns, !out.empty());
    if (why.empty()) return;
    std::vector<std::string> warning;
    for (const finding& f : out) warning.emplace_back(to_string(f.detector));
    std::optional<judge_answer> answer;
    ++stats.judge_checks;
    try {
      answer = judge_hook(judge.digest(stats.turns, why, std::move(warning)));
    } catch (...) {
      answer.reset();
      ++stats.judge_errors;
    }
    if (answer && !(std::isfinite(answer->probability) && answer->probability >= 0 &&
                    answer->probability <= 1)) {
      answer.reset();
      ++stats.judge_errors;
    }
    if (answer) {
      if (!(std::isfinite(answer->cost) && answer->cost > 0)) answer->cost = 0;
      stats.judge_cost += answer->cost;
      answer->reason = std::string(utf8::cut(utf8::repair(answer->reason), 500));
    }
    report(out, judge.answer(stats.turns, answer, index),
           {detector_id::judge, sdk::identity_of(sdk::fixed_loop::judged_stuck)});
  }

  verdict decide(const std::vector<finding>& findings, std::size_t index, bool is_call,
                 const sdk::global_verdicts::key* match = nullptr) {
    verdict v;
    v.event_index = index;
    const bool swarm = match != nullptr || globals.has_waiting();
    if (findings.empty() && !swarm) return finish(std::move(v));
    for (const finding& f : findings) {
      const auto [level, occurrence] = esc.judge(f);
      if (level == severity::none) continue;
      auto text = sdk::make_nudge(f, level, occurrence, config.escalation.reject_at_critical);
      v.detections.push_back(to_detection(f, level, occurrence, std::move(text)));
    }
    strongest_first(v.detections);
    action act = local_action(v.detections, findings, is_call);
    if (swarm) {
      act = globals.merge(v.detections, index, match, act, config.escalation.reject_at_critical);
    }
    if (!v.detections.empty()) {
      v.level = v.strongest().level;
      v.action = act;
      count_detections(v);
    }
    return finish(std::move(v));
  }

  // What the strongest local detection calls for (a critical call repeat may reject).
  action local_action(const std::vector<detection>& detections,
                      const std::vector<finding>& findings, bool is_call) const {
    if (detections.empty()) return action::allow;
    const detection& top = detections.front();
    const bool rejects = is_call && config.escalation.reject_at_critical &&
                         std::any_of(findings.begin(), findings.end(), [&](const finding& f) {
                           return f.detector == top.detector && f.rejectable;
                         });
    return sdk::action_for(top.level, rejects);
  }

  void count_detections(const verdict& v) {
    for (const auto& d : v.detections) {
      ++stats.detections[static_cast<std::size_t>(d.detector)][static_cast<std::size_t>(d.level)];
    }
  }

  // Every verdict leaves through here: the override, then the counts of what is returned (in
  // observe mode: of what would have been), then observe mode turns every action into allow.
  verdict finish(verdict v) {
    if (override_fn) v = override_fn(std::move(v));
    if (v.action == action::reject) ++stats.rejected;
    if (v.action == action::terminate) ++stats.terminated;
    if (config.mode == guard_mode::observe) v.would_have = std::exchange(v.action, action::allow);
    return v;
  }

  // A tool call ends the text stream (with any incomplete character) and the text-only streak.
  void end_text() {
    end_stream();
    text_turns.clear();
    esc.quiet_all(detector_id::summary);
    streaming = false;
    chunk_tail.clear();
    content.reset();
  }

  sdk::call_record record_of(std::size_t index, std::string_view tool, call_fingerprint&& call_fp,
                             std::string_view id) {
    sdk::call_record rec;
    rec.event_index = index;
    rec.turn = stats.turns;
    rec.tool = std::string(tool);
    rec.id = std::string(id);
    rec.fp = std::move(call_fp);
    const tool_kind& kind = kind_of(tool);
    const bool shell = rec.fp.is_shell;
    const sdk::command_kind line =
        shell ? sdk::kind_of_command(rec.fp.shell_command) : sdk::command_kind{};
    rec.mutating = shell ? kind.mutating || line.mutating
                         : kind.mutating && !sdk::names_read_only_command(rec.fp.canonical_args);
    rec.test_run = kind.test || line.test;
    rec.file_op = line.file_op;
    rec.novel = !history.seen_exact(rec.fp.exact, index);
    rec.progress = rec.mutating && rec.novel;
    return rec;
  }

  // exact, structural, similar_args and cycle on a call not yet in the history.
  void judge_call(std::vector<finding>& out, sdk::call_record& rec, std::uint32_t total) {
    const tool_override* ov = override_for(rec.tool);
    if (ov && ov->enabled && !*ov->enabled) return;  // the call rules are off for this tool
    const bool aware = config.escalation.outcome_aware;
    bool exact_fired = false;
    if (config.exact.enabled) {
      const ladder steps = ov && ov->exact ? *ov->exact : config.exact.steps;
      const bool poll = ov && ov->poll && *ov->poll;
      exact_fired =
          report(out, sdk::check_exact(history, rec, config.exact, steps, aware, total, poll),
                 {detector_id::exact, rec.fp.exact});
      if (exact_fired && config.exact.reset_after_fire) rec.barrier = true;
    }
    if (config.structural.enabled && !exact_fired) {
      // A tool whose exact ladder is overridden gets the same ladder for structural repeats
      // unless that is overridden too: a polling tool is allowed to repeat either way.
      const ladder steps = ov && ov->structural ? *ov->structural
                           : ov && ov->exact    ? *ov->exact
                                                : config.structural.steps;
      report(out, sdk::check_structural(history, rec, config.structural, steps, aware),
             {detector_id::structural, rec.fp.structural});
    }
    if (config.similar_args.enabled) {
      const ladder steps = ov && ov->similar_args ? *ov->similar_args : config.similar_args.steps;
      report(out, sdk::check_similar_args(history, rec, config.similar_args, steps, aware),
             {detector_id::similar_args, std::nullopt});
    }
    if (config.cycle.enabled) {
      report(out, sdk::check_cycle(history, rec, config.cycle, aware),
             {detector_id::cycle, std::nullopt});
    }
  }

  verdict tool_call(std::string_view tool, call_fingerprint call_fp, std::string_view id,
                    std::string_view peer) {
    const std::size_t index = begin_event();
    ++stats.tool_calls;
    if (last != last_event::tool_call && last != last_event::text) new_turn();
    last = last_event::tool_call;
    end_text();
    sdk::call_record rec = record_of(index, tool, std::move(call_fp), id);
    rec.peer = std::string(peer);
    if (totals.size() >= kMaxTotals) totals.clear();
    const std::uint32_t total = ++totals[rec.fp.exact];

    std::vector<finding> findings;
    judge_call(findings, rec, total);
    add_limits(findings, index);
    if (judge_hook) note(index, "tool_call", rec.tool, summary_of(rec.fp));
    maybe_judge(findings, index);
    const sdk::global_verdicts::key* match =
        globals.critical_match(rec.fp.exact, rec.fp.structural);
    history.push(std::move(rec));
    verdict v = decide(findings, index, true, match);
    // A refused call never runs: no result will pair with it.
    const bool refused = v.action == action::reject || v.action == action::terminate;
    if (refused) {
      history.mark_not_run();
      last = last_event::refusal;
    }
    if (sink) pending.on_call(*history.last(), refused, sink);
    return v;
  }

  // Records the outcome on its call; says what the call was.
  outcome_of answer(sdk::call_record* rec, std::string_view tool, bool ok, std::string_view output,
                    std::uint64_t result) {
    if (rec == nullptr) return {kind_of(tool).test, fp.is_shell_tool(tool), false, tool};
    rec->answered = true;
    rec->ok = ok;
    rec->result = result;
    rec->unproductive = sdk::is_unproductive(ok, output);
    if (rec->unproductive) rec->failure = sdk::failure_signature(output);
    rec->progress = rec->progress && ok;
    const bool shell = rec->fp.is_shell;
    return {rec->test_run, shell, rec->file_op,
            shell ? std::string_view(rec->fp.shell_command) : tool};
  }

  // test_fix and bash_cascade on a result. `rec`: its call, when there is one (it holds the
  // failure's signature already).
  void judge_streaks(std::vector<finding>& out, const outcome_of& call, const sdk::call_record* rec,
                     bool ok, std::string_view output, std::size_t index) {
    const bool test_failed =
        call.test_run && config.test_fix.enabled && (!ok || sdk::reports_test_failure(output));
    const bool shell_failed = call.shell && config.bash_cascade.enabled && !ok;
    std::string own;  // the signature, when no call holds it
    std::string_view signature;
    if (test_failed || shell_failed) {
      if (rec == nullptr || rec->failure.empty()) own = sdk::failure_signature(output);
      signature = own.empty() && rec != nullptr ? std::string_view(rec->failure) : own;
    }
    const std::uint64_t call_fp = rec != nullptr ? rec->fp.exact : 0;
    const std::size_t turn = rec != nullptr ? rec->turn : 0;
    if (call.test_run && config.test_fix.enabled) {
      report(out,
             sdk::test_fix_result(test_failures, {test_failed, signature, false, call_fp, turn},
                                  index, config.test_fix, call.command),
             test_failures, detector_id::test_fix);
    }
    if (call.shell && config.bash_cascade.enabled) {
      report(out,
             sdk::bash_cascade_result(shell_failures,
                                      {shell_failed, signature, call.file_op, call_fp, turn}, index,
                                      config.bash_cascade, call.command),
             shell_failures, detector_id::bash_cascade);
    }
  }

  verdict tool_result(std::string_view tool, bool ok, std::string_view output, std::string_view id,
                      const protocol::cost& spent) {
    const std::size_t index = begin_event();
    cost += spent.amount;
    ++stats.tool_results;
    last = last_event::tool_result;
    sdk::call_record* rec = history.find_open(tool, id);
    const std::uint64_t result = fp.of_result(ok, output);
    const outcome_of call = answer(rec, tool, ok, output, result);
    if (rec != nullptr && rec->progress) test_failures.changed = true;
    if (sink) pending.on_result(rec, ok, result, index, spent, sink);

    std::vector<finding> findings;
    judge_streaks(findings, call, rec, ok, output, index);
    if (rec != nullptr && config.result.enabled) {
      sdk::result_check c = sdk::check_result(history, *rec, config.result);
      if (!c.counted_before) report(findings, std::move(c.found), {detector_id::result, result});
    }
    if (rec != nullptr && config.retrace.enabled && !polls_or_off(rec->tool)) {
      report(findings,
             sdk::retrace_result(std::move(retraced), *rec, output.size(), index, config.retrace),
             retraced, detector_id::retrace);
    }
    count_failure(ok, rec);
    add_limits(findings, index);
    note(index, "tool_result", tool, output, ok);
    maybe_judge(findings, index);
    return decide(findings, index, false);
  }

  // content over one whole turn: the turn is one stream, unless chunks have streamed it.
  std::optional<finding> content_of_turn(std::string_view content_text, std::size_t index) {
    std::optional<finding> f;
    if (!streaming) {
      content.reset();
      f = content.feed(content_text, index);
    }
    if (auto g = content.finish(index)) f = std::move(g);
    content.reset();
    return f;  // none: a whole turn without the loop, it was left
  }

  verdict text(std::string_view content_text) {
    const std::size_t index = begin_event();
    ++stats.texts;
    new_turn();
    if (sink) pending.on_text(index);
    std::vector<finding> findings;
    report(findings, sdk::summary_turn(text_turns, last == last_event::text, index, config.summary),
           text_turns, detector_id::summary);
    last = last_event::text;
    if (config.output_similarity.enabled) {
      report(findings, similar_outputs.check(content_text, index),
             {detector_id::output_similarity, std::nullopt});
    }
    if (config.content.enabled) {
      report(findings, content_of_turn(content_text, index), {detector_id::content, std::nullopt});
    }
    if (config.intent.enabled) {
      report(findings, sdk::check_intent(content_text, config.intent, /*streaming=*/false),
             {detector_id::intent, sdk::identity_of(sdk::fixed_loop::announced_intent)});
    }
    streaming = false;
    end_stream();
    add_limits(findings, index);
    note(index, "text", {}, content_text);
    maybe_judge(findings, index);
    return decide(findings, index, false);
  }

  verdict text_chunk(std::string_view chunk) {
    const std::size_t index = begin_event();
    ++stats.text_chunks;
    if (sink) pending.on_text(index);
    std::vector<finding> findings;
    if (!streaming) {
      content.reset();
      streaming = true;
    }
    if (config.content.enabled) {
      if (auto f = content.feed(chunk, index)) findings.push_back(std::move(*f));
    }
    if (config.intent.enabled) {
      if (auto f = intent_so_far(chunk)) findings.push_back(std::move(*f));
    }
    return decide(findings, index, false);
  }

  // intent during a stream: the reply so far, looked at again every kIntentStep bytes (only a
  // critical level is reported before the reply is complete).
  static constexpr std::size_t kIntentStep = 400;
  static constexpr std::size_t kIntentKeep = 64 * 1024;
  std::optional<sdk::finding> intent_so_far(std::string_view chunk) {
    streamed.append(chunk);
    if (streamed.size() > kIntentKeep) {
      const std::size_t drop = streamed.size() - kIntentKeep / 2;
      streamed.erase(0, drop);
      streamed_checked = streamed_checked > drop ? streamed_checked - drop : 0;
    }
    if (streamed.size() < streamed_checked + kIntentStep) return std::nullopt;
    streamed_checked = streamed.size();
    return sdk::check_intent(streamed, config.intent, /*streaming=*/true);
  }

  void end_stream() {
    streamed.clear();
    streamed_checked = 0;
  }

  // What a user message restarts: every count of the agent's own repetition. The episodes stay
  // (a loop that comes back after the message is the same loop, and its ladder goes on).
  void restart_counts() {
    history.restart();
    text_turns.clear();
    test_failures.clear();
    shell_failures.clear();
    retraced.clear();
    similar_outputs.reset();
    content.reset();
    streaming = false;
    end_stream();
    chunk_tail.clear();
    for (std::size_t d = 0; d < kDetectorCount; ++d) {
      const auto id = static_cast<detector_id>(d);
      if (id != detector_id::limit && !is_swarm_detector(id)) esc.quiet_all(id);
    }
  }

  // A user message or a resume: an event of its own, judged only by the limits (and carrying a
  // swarm nudge that is waiting).
  verdict outside_event(bool resume, std::string_view text) {
    const std::size_t index = begin_event();
    ++(resume ? stats.resumes : stats.user_messages);
    if (sink) pending.on_text(index);
    // An ignored user message (user_message_restarts off) is invisible to the repetition rules:
    // the text-only streak goes on across it too.
    const bool restarts = resume || config.escalation.user_message_restarts;
    if (restarts) restart_counts();
    if (resume) esc.forget_loops_except(detector_id::limit);
    if (restarts) last = last_event::user;
    if (resume) judge.clear_streak();
    std::vector<finding> findings;
    add_limits(findings, index);
    note(index, resume ? "resume" : "user", {}, text);
    maybe_judge(findings, index);
    return decide(findings, index, false);
  }

  verdict add_cost(const protocol::cost& spent) {
    cost += spent.amount;
    if (sink) pending.charge(spent, sink);
    std::vector<finding> findings;
    add_limits(findings, last_index());
    return decide(findings, last_index(), false);
  }
};

ExecutionEconomicsManager::ExecutionEconomicsManager()
    : ExecutionEconomicsManager(manager_config{}) {}
ExecutionEconomicsManager::ExecutionEconomicsManager(manager_config config)
    : impl_(std::make_unique<impl>(std::move(config))) {}
ExecutionEconomicsManager::~ExecutionEconomicsManager() = default;
ExecutionEconomicsManager::ExecutionEconomicsManager(ExecutionEconomicsManager&&) noexcept =
    default;
ExecutionEconomicsManager& ExecutionEconomicsManager::operator=(
    ExecutionEconomicsManager&&) noexcept = default;

// Every string from the caller is made valid UTF-8 here, once (utf8::repaired): detectors,
// nudges and fingerprints then only ever see valid text.
verdict ExecutionEconomicsManager::on_tool_call(std::string_view tool, const nlohmann::json& args,
                                                std::string_view call_id, std::string_view peer) {
  const utf8::repaired t(tool), id(call_id), to(peer);
  return impl_->tool_call(t, impl_->fp.of_call(t, args), id, to);
}

verdict ExecutionEconomicsManager::on_tool_call_json(std::string_view tool,
                                                     std::string_view args_json,
                                                     std::string_view call_id,
                                                     std::string_view peer) {
  // Text that is not JSON is fingerprinted as a string, so a malformed call still repeats.
  const utf8::repaired t(tool), id(call_id), to(peer);
  return impl_->tool_call(t, impl_->fp.of_call_text(t, args_json), id, to);
}

verdict ExecutionEconomicsManager::on_tool_result(std::string_view tool, bool ok,
                                                  std::string_view output, std::string_view call_id,
                                                  const protocol::cost& cost) {
  const utf8::repaired t(tool), out(output), id(call_id);
  return impl_->tool_result(t, ok, out, id, protocol::sanitized(cost));
}

verdict ExecutionEconomicsManager::on_text(std::string_view content) {
  // A whole turn: whatever a chunk left incomplete is part of it.
  std::string joined = std::exchange(impl_->chunk_tail, {});
  if (joined.empty()) return impl_->text(utf8::repaired(content));
  joined.append(content);
  return impl_->text(utf8::repaired(joined));
}

verdict ExecutionEconomicsManager::on_text_chunk(std::string_view chunk) {
  // A stream may be cut inside a character: hold an incomplete sequence back for the next piece.
  std::string piece = std::exchange(impl_->chunk_tail, {});
  piece.append(chunk);
  const std::size_t tail = utf8::incomplete_tail(piece);
  impl_->chunk_tail.assign(piece, piece.size() - tail, tail);
  piece.resize(piece.size() - tail);
  return impl_->text_chunk(utf8::repaired(piece));
}

verdict ExecutionEconomicsManager::on_user_message(std::string_view content) {
  // The text judges nothing itself (what matters is that a message came); a judge sees it.
  return impl_->outside_event(false, utf8::repaired(content));
}

verdict ExecutionEconomicsManager::on_resume() {
  return impl_->outside_event(true, {});
}

void ExecutionEconomicsManager::set_judge(judge_fn f) {
  impl_->judge_hook = std::move(f);
}

verdict ExecutionEconomicsManager::add_cost(double amount) {
  return add_cost(protocol::cost{0, amount});
}

verdict ExecutionEconomicsManager::add_cost(const protocol::cost& cost) {
  return impl_->add_cost(protocol::sanitized(cost));
}

void ExecutionEconomicsManager::on_swarm_verdict(const protocol::verdict& pushed) {
  protocol::verdict v = pushed;
  v.tool = utf8::repair(v.tool);
  v.message = utf8::repair(v.message);
  impl_->globals.record(std::move(v));
}

void ExecutionEconomicsManager::set_call_sink(call_sink f) {
  impl_->sink = std::move(f);
}
void ExecutionEconomicsManager::flush_calls() {
  if (impl_->sink) impl_->pending.flush(impl_->sink);
}

void ExecutionEconomicsManager::reset() {
  impl_->clear_run();
}
void ExecutionEconomicsManager::set_clock(clock c) {
  impl_->clock = std::move(c);
}
void ExecutionEconomicsManager::set_override(verdict_override f) {
  impl_->override_fn = std::move(f);
}
const manager_stats& ExecutionEconomicsManager::stats() const {
  return impl_->stats;
}
const manager_config& ExecutionEconomicsManager::config() const {
  return impl_->config;
}
std::size_t ExecutionEconomicsManager::events() const {
  return impl_->next_index;
}

void ExecutionEconomicsManager::on_swarm_complete() {
  impl_->globals.clear();
}

}  // namespace loopguard
