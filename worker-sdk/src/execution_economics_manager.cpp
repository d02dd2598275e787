#include "loopguard/execution_economics_manager.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "call_history.hpp"
#include "command_kinds.hpp"
#include "detectors/content_loop.hpp"
#include "detectors/cycle.hpp"
#include "detectors/output_similarity.hpp"
#include "detectors/repeat_chain.hpp"
#include "detectors/result.hpp"
#include "detectors/streaks.hpp"
#include "escalation.hpp"
#include "loopguard/utf8.hpp"
#include "nudges.hpp"

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

enum class last_event { none, text, tool_call, tool_result };

// Everything one run accumulates. reset() replaces it whole, so no member can survive a reset
// by being forgotten.
struct run_state {
  explicit run_state(const manager_config& c)
      : history(history_capacity(c)),
        esc(c.escalation),
        similar_outputs(c.output_similarity),
        content(c.content),
        limits(c.limit) {}

  sdk::call_history history;
  sdk::escalation esc;
  sdk::output_similarity_detector similar_outputs;
  sdk::content_loop_detector content;
  sdk::safety_limits limits;
  std::unordered_map<std::uint64_t, std::uint32_t> totals;  // calls per exact fingerprint
  sdk::streak text_turns, test_failures, shell_failures;
  std::uint32_t shell_file_op_failures = 0;
  std::uint32_t consecutive_failures = 0;
  double cost = 0;
  std::optional<double> started_at;
  bool streaming = false;
  std::string chunk_tail;  // an incomplete UTF-8 sequence at the end of the last chunk
  last_event last = last_event::none;
  std::size_t next_index = 0;
  manager_stats stats;
};

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

  void clear_run() { static_cast<run_state&>(*this) = run_state(config); }

  std::size_t begin_event() {
    ++stats.checks;
    if (clock && !started_at) started_at = clock();
    return next_index++;
  }

  void new_turn() { ++stats.turns; }

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

  verdict decide(std::vector<finding>& findings, std::size_t index, bool is_call) {
    verdict v;
    v.event_index = index;
    for (const finding& f : findings) {
      std::uint32_t occurrence = 0;
      const severity level = esc.judge(f, occurrence);
      if (level == severity::none) continue;
      const auto text = sdk::make_nudge(f, level, occurrence, config.escalation.reject_at_critical);
      detection d;
      d.detector = f.detector;
      d.level = level;
      d.count = f.count;
      d.confidence = f.confidence;
      d.loop_start = f.loop_start;
      d.occurrence = occurrence;
      d.tool = f.tool;
      d.message = text.message;
      d.suggestion = text.suggestion;
      v.detections.push_back(std::move(d));
    }
    std::stable_sort(v.detections.begin(), v.detections.end(),
                     [](const detection& a, const detection& b) {
                       if (a.level != b.level) return a.level > b.level;
                       return a.confidence > b.confidence;
                     });
    if (!v.detections.empty()) {
      const detection& top = v.detections.front();
      v.level = top.level;
      const bool rejectable = std::any_of(findings.begin(), findings.end(), [&](const finding& f) {
        return f.detector == top.detector && f.rejectable;
      });
      if (top.level == severity::terminate) {
        v.action = action::terminate;
      } else if (top.level == severity::critical && is_call && rejectable &&
                 config.escalation.reject_at_critical) {
        v.action = action::reject;
      } else {
        v.action = action::nudge;
      }
      for (const auto& d : v.detections) {
        ++stats.detections[static_cast<std::size_t>(d.detector)][static_cast<std::size_t>(d.level)];
      }
    }
    if (override_fn) v = override_fn(std::move(v));
    if (v.action == action::reject) ++stats.rejected;
    if (v.action == action::terminate) ++stats.terminated;
    return v;
  }

  verdict tool_call(std::string_view tool, call_fingerprint call_fp, std::string_view id) {
    const std::size_t index = begin_event();
    ++stats.tool_calls;
    if (last == last_event::none || last == last_event::tool_result) new_turn();
    last = last_event::tool_call;
    text_turns.clear();
    esc.quiet_all(detector_id::summary);
    streaming = false;
    chunk_tail.clear();
    content.reset();  // a tool call ends the text stream (with any incomplete character)

    sdk::call_record rec;
    rec.event_index = index;
    rec.tool = std::string(tool);
    rec.id = std::string(id);
    rec.fp = std::move(call_fp);
    const tool_kind& kind = kind_of(tool);
    rec.mutating =
        kind.mutating || (rec.fp.is_shell && sdk::is_mutating_command(rec.fp.shell_command));
    rec.test_run = kind.test || (rec.fp.is_shell && sdk::is_test_command(rec.fp.shell_command));
    rec.file_op = rec.fp.is_shell && sdk::is_file_op_command(rec.fp.shell_command);
    rec.progress = rec.mutating && !history.seen_exact(rec.fp.exact, index);
    if (totals.size() >= kMaxTotals) totals.clear();
    const std::uint32_t total = ++totals[rec.fp.exact];

    std::vector<finding> findings;
    const tool_override* ov = override_for(tool);
    const bool call_rules = !(ov && ov->enabled && !*ov->enabled);
    const bool aware = config.escalation.outcome_aware;
    if (call_rules) {
      bool exact_fired = false;
      if (config.exact.enabled) {
        const ladder steps = ov && ov->exact ? *ov->exact : config.exact.steps;
        if (auto f = sdk::check_exact(history, rec, config.exact, steps, aware, total)) {
          findings.push_back(std::move(*f));
          exact_fired = true;
          if (config.exact.reset_after_fire) rec.barrier = true;
        } else {
          esc.quiet(detector_id::exact, rec.fp.exact);
        }
      }
      if (config.structural.enabled && !exact_fired) {
        // A tool whose exact ladder is overridden gets the same ladder for structural repeats
        // unless that is overridden too: a polling tool is allowed to repeat either way.
        const ladder steps = ov && ov->structural ? *ov->structural
                             : ov && ov->exact    ? *ov->exact
                                                  : config.structural.steps;
        if (auto f = sdk::check_structural(history, rec, config.structural, steps, aware)) {
          findings.push_back(std::move(*f));
        } else {
          esc.quiet(detector_id::structural, rec.fp.structural);
        }
      }
      if (config.similar_args.enabled) {
        const ladder steps = ov && ov->similar_args ? *ov->similar_args : config.similar_args.steps;
        if (auto f = sdk::check_similar_args(history, rec, config.similar_args, steps, aware)) {
          findings.push_back(std::move(*f));
        } else {
          esc.quiet_all(detector_id::similar_args);
        }
      }
      if (config.cycle.enabled) {
        if (auto f = sdk::check_cycle(history, rec, config.cycle, aware)) {
          findings.push_back(std::move(*f));
        } else {
          esc.quiet_all(detector_id::cycle);
        }
      }
    }
    add_limits(findings, index);
    history.push(std::move(rec));
    verdict v = decide(findings, index, true);
    // A refused call never runs: no result will pair with it.
    if (v.action == action::reject || v.action == action::terminate) history.mark_not_run();
    return v;
  }

  verdict tool_result(std::string_view tool, bool ok, std::string_view output,
                      std::string_view id) {
    const std::size_t index = begin_event();
    ++stats.tool_results;
    last = last_event::tool_result;
    std::vector<finding> findings;

    sdk::call_record* rec = history.find_open(tool, id);
    const std::uint64_t result = fp.of_result(ok, output);
    bool test_run = kind_of(tool).test;
    bool shell = fp.is_shell_tool(tool);
    bool file_op = false;
    std::string call_tool(tool);
    if (rec != nullptr) {
      rec->answered = true;
      rec->ok = ok;
      rec->result = result;
      rec->unproductive = sdk::is_unproductive(ok, output);
      rec->progress = rec->progress && ok;
      test_run = rec->test_run;
      shell = rec->fp.is_shell;
      file_op = rec->file_op;
      if (rec->fp.is_shell) call_tool = rec->fp.shell_command;
    }

    if (test_run && config.test_fix.enabled) {
      if (!ok || sdk::reports_test_failure(output)) {
        test_failures.hit(index);
        if (auto f = sdk::streak_finding(detector_id::test_fix, test_failures, config.test_fix,
                                         call_tool)) {
          findings.push_back(std::move(*f));
        }
      } else {
        test_failures.clear();
        esc.quiet_all(detector_id::test_fix);
      }
    }
    if (shell && config.bash_cascade.enabled) {
      if (!ok) {
        if (shell_failures.length == 0) shell_file_op_failures = 0;
        shell_failures.hit(index);
        if (file_op) ++shell_file_op_failures;
        const bool mostly_files = 2 * shell_file_op_failures >= shell_failures.length;
        if (auto f =
                sdk::streak_finding(detector_id::bash_cascade, shell_failures, config.bash_cascade,
                                    call_tool, mostly_files ? "file_ops" : "")) {
          findings.push_back(std::move(*f));
        }
      } else {
        shell_failures.clear();
        esc.quiet_all(detector_id::bash_cascade);
      }
    }
    if (rec != nullptr && config.result.enabled) {
      if (auto f = sdk::check_result(history, *rec, config.result)) {
        findings.push_back(std::move(*f));
      } else {
        esc.quiet(detector_id::result, result);
      }
    }
    consecutive_failures = ok ? 0 : consecutive_failures + 1;
    add_limits(findings, index);
    return decide(findings, index, false);
  }

  verdict text(std::string_view content_text) {
    const std::size_t index = begin_event();
    ++stats.texts;
    new_turn();
    std::vector<finding> findings;
    if (last == last_event::text || text_turns.length == 0) {
      text_turns.hit(index);
    } else {
      text_turns.clear();
      text_turns.hit(index);
    }
    last = last_event::text;
    if (auto f = sdk::streak_finding(detector_id::summary, text_turns, config.summary, "")) {
      findings.push_back(std::move(*f));
    }
    if (config.output_similarity.enabled) {
      if (auto f = similar_outputs.check(content_text, index)) {
        findings.push_back(std::move(*f));
      } else {
        esc.quiet_all(detector_id::output_similarity);
      }
    }
    if (config.content.enabled) {
      std::optional<finding> f;
      if (!streaming) {
        content.reset();
        f = content.feed(content_text, index);
      }
      auto g = content.finish(index);
      if (g) f = std::move(g);
      if (f) {
        findings.push_back(std::move(*f));
      } else {
        esc.quiet_all(detector_id::content);  // a whole turn without the loop: it was left
      }
      content.reset();
    }
    streaming = false;
    add_limits(findings, index);
    return decide(findings, index, false);
  }

  verdict text_chunk(std::string_view chunk) {
    const std::size_t index = begin_event();
    ++stats.text_chunks;
    std::vector<finding> findings;
    if (!streaming) {
      content.reset();
      streaming = true;
    }
    if (config.content.enabled) {
      if (auto f = content.feed(chunk, index)) findings.push_back(std::move(*f));
    }
    return decide(findings, index, false);
  }

  verdict add_cost(double amount) {
    // A cost that is not a finite, non-negative number says nothing about spend: ignored.
    if (std::isfinite(amount) && amount > 0) cost += amount;
    std::vector<finding> findings;
    add_limits(findings, next_index == 0 ? 0 : next_index - 1);
    return decide(findings, next_index == 0 ? 0 : next_index - 1, false);
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
                                                std::string_view call_id) {
  const utf8::repaired t(tool), id(call_id);
  return impl_->tool_call(t, impl_->fp.of_call(t, args), id);
}

verdict ExecutionEconomicsManager::on_tool_call_json(std::string_view tool,
                                                     std::string_view args_json,
                                                     std::string_view call_id) {
  // Text that is not JSON is fingerprinted as a string, so a malformed call still repeats.
  const utf8::repaired t(tool), id(call_id);
  return impl_->tool_call(t, impl_->fp.of_call_text(t, args_json), id);
}

verdict ExecutionEconomicsManager::on_tool_result(std::string_view tool, bool ok,
                                                  std::string_view output,
                                                  std::string_view call_id) {
  const utf8::repaired t(tool), out(output), id(call_id);
  return impl_->tool_result(t, ok, out, id);
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

verdict ExecutionEconomicsManager::add_cost(double amount) {
  return impl_->add_cost(amount);
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

}  // namespace loopguard
