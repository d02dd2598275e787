#include "repeat_chain.hpp"

#include <algorithm>
#include <set>

#include "failure_signature.hpp"
#include "loopguard/similarity.hpp"

namespace loopguard::sdk {
namespace {

bool fires(std::uint32_t count, const ladder& steps) {
  return count >= steps.warn_at;
}

}  // namespace

chain count_chain(const call_history& history, const call_record& current, std::uint32_t window,
                  bool consecutive, bool outcome_aware,
                  const std::function<bool(const call_record&)>& is_occurrence) {
  chain c;
  c.loop_start = current.event_index;
  bool have_latest = false;
  std::uint64_t latest = 0;
  // The window counts the current call, so it looks back at window - 1 earlier calls. Outcome
  // aware, a failed attempt on the same target (same structural fingerprint) between the
  // repeats is part of the same struggle and takes no room in the window.
  std::size_t room = window > 0 ? window - 1 : 0;
  for (std::size_t i = 0; i < history.size() && room > 0; ++i) {
    const call_record& r = history.newest(i);
    if (r.barrier) break;
    if (!is_occurrence(r)) {
      if (consecutive || (outcome_aware && (r.progress || r.informative()))) break;
      const bool same_struggle =
          outcome_aware && r.answered && r.unproductive && r.fp.structural == current.fp.structural;
      if (!same_struggle) --room;
      continue;
    }
    --room;
    if (outcome_aware) {
      if (r.progress && r.fp.exact != current.fp.exact) break;  // a different change: progress
      if (r.answered) {
        if (!have_latest) {
          latest = r.result;
          have_latest = true;
        } else if (r.result != latest) {
          break;  // this call's outcome changed since: polling or paging, not a loop
        }
      }
    }
    if (!r.answered) c.results_known = false;
    ++c.count;
    c.loop_start = r.event_index;
  }
  return c;
}

namespace {

// The longer of the consecutive run and the window count, as the rule's mode asks.
chain longest_chain(const call_history& history, const call_record& current,
                    const repeat_rule& rule, bool outcome_aware,
                    const std::function<bool(const call_record&)>& is_occurrence) {
  chain best;
  if (rule.mode != count_mode::window) {
    best = count_chain(history, current, rule.window, true, outcome_aware, is_occurrence);
  }
  if (rule.mode != count_mode::consecutive) {
    const chain w = count_chain(history, current, rule.window, false, outcome_aware, is_occurrence);
    if (w.count > best.count) best = w;
  }
  return best;
}

}  // namespace

std::uint32_t same_result_streak(const call_history& history, const call_record& current,
                                 std::uint32_t window) {
  std::uint32_t n = 1;
  std::optional<std::uint64_t> latest;
  std::size_t room = window > 0 ? window - 1 : 0;
  for (std::size_t i = 0; i < history.size() && room > 0; ++i, --room) {
    const call_record& r = history.newest(i);
    if (r.barrier) break;
    if (r.fp.exact != current.fp.exact || !r.answered) continue;
    if (!latest) latest = r.result;
    if (r.result != *latest) break;
    ++n;
  }
  return n;
}

namespace {

// The repeats as the rule counts them; a polling tool's only while its result stays the same.
chain exact_chain(const call_history& history, const call_record& current, const repeat_rule& rule,
                  bool outcome_aware, bool poll) {
  chain best = longest_chain(history, current, rule, outcome_aware,
                             [&](const call_record& r) { return r.fp.exact == current.fp.exact; });
  if (poll) best.count = std::min(best.count, same_result_streak(history, current, rule.window));
  return best;
}

}  // namespace

std::optional<finding> check_exact(const call_history& history, const call_record& current,
                                   const repeat_rule& rule, const ladder& steps, bool outcome_aware,
                                   std::uint32_t total_calls, bool poll) {
  const chain best = exact_chain(history, current, rule, outcome_aware, poll);
  finding f;
  f.detector = detector_id::exact;
  f.identity = current.fp.exact;
  f.tool = current.tool;
  f.rejectable = true;
  if (fires(best.count, steps)) {
    f.count = best.count;
    f.steps = steps;
    // A poll's count is already its same-result streak: nothing more to check.
    if (rule.critical_needs_same_result && !poll && steps.critical_at > 0 &&
        best.count >= steps.critical_at &&
        same_result_streak(history, current, rule.window) < steps.critical_at) {
      // Repeats, but not without progress: no more than a warning.
      f.steps.critical_at = 0;
      f.steps.terminate_at = 0;
    }
    f.loop_start = best.loop_start;
    f.confidence = best.results_known ? 1.0 : 0.9;
    f.results_known = best.results_known && outcome_aware;
    return f;
  }
  if (rule.absolute_cap > 0 && total_calls >= rule.absolute_cap) {
    // The same call keeps coming back with new results: bounded only by the cap.
    f.count = total_calls;
    f.steps = ladder{rule.absolute_cap, rule.absolute_cap * 2};
    f.loop_start = current.event_index;
    f.confidence = 0.6;
    f.detail = "cap";
    return f;
  }
  return std::nullopt;
}

std::optional<finding> check_structural(const call_history& history, const call_record& current,
                                        const repeat_rule& rule, const ladder& steps,
                                        bool outcome_aware) {
  const chain best =
      longest_chain(history, current, rule, outcome_aware,
                    [&](const call_record& r) { return r.fp.structural == current.fp.structural; });
  if (!fires(best.count, steps)) return std::nullopt;
  finding f;
  f.detector = detector_id::structural;
  f.identity = current.fp.structural;
  f.count = best.count;
  f.steps = steps;
  f.loop_start = best.loop_start;
  f.confidence = best.results_known ? 0.85 : 0.75;
  f.results_known = best.results_known && outcome_aware;
  f.tool = current.tool;
  f.detail = current.fp.normalized;
  f.rejectable = true;
  return f;
}

namespace {

// What similar_args makes of an earlier call, walking back from the current one.
enum class earlier { failure, other, end };

struct similar_walk {
  const call_history& history;
  const call_record& current;
  std::size_t look;  // earlier calls inside the window
  bool outcome_aware;
  bool identical_errors;

  // A failed call of the current call's tool counts; the walk ends at a call of that tool that
  // worked (or, outcome-aware, at any call that was progress).
  earlier classify(const call_record& r) const {
    if (outcome_aware && r.progress) return earlier::end;
    if (r.tool != current.tool || !r.answered) return earlier::other;
    if (identical_errors && r.fp.exact == current.fp.exact) {
      return r.ok ? earlier::end : earlier::failure;  // only errors count, any error
    }
    return r.unproductive ? earlier::failure : earlier::end;  // the tool just worked: progress
  }
};

// Cheap first pass: without enough failed calls of the tool there is nothing to compare (the
// calls bound the attempts counted below from above).
std::uint32_t failed_calls(const similar_walk& walk) {
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < walk.look; ++i) {
    const earlier e = walk.classify(walk.history.newest(i));
    if (e == earlier::end) break;
    if (e == earlier::failure) ++n;
  }
  return n;
}

struct similar_chain {
  std::uint32_t count = 1;       // attempts, the current call included (one per turn)
  std::size_t counted_turn = 0;  // the turn counted last
  std::size_t start = 0;
  std::uint64_t latest = 0;          // the result of the most recent similar failure
  std::set<std::uint64_t> distinct;  // exact fingerprints counted
  double min_score = 100;
};

// Two failures count as the same failure when their results are equal or, when both are errors
// (not empty answers: a search for a new term that finds nothing is a new question), when they
// failed alike.
bool errors_alike(const call_record& a, const call_record& b, double threshold) {
  return !a.ok && !b.ok && failed_alike(a.failure, b.failure, threshold);
}

similar_chain count_similar(const similar_walk& walk, double threshold, double result_threshold) {
  similar_chain c;
  const call_record* newest_failure = nullptr;  // the most recent similar failure
  c.start = walk.current.event_index;
  c.counted_turn = walk.current.turn;
  c.distinct.insert(walk.current.fp.exact);
  std::optional<similarity::cached_ratio> cached;  // built only when there is a candidate
  bool have_latest = false;
  for (std::size_t i = 0; i < walk.look; ++i) {
    const call_record& r = walk.history.newest(i);
    const earlier e = walk.classify(r);
    if (e == earlier::end) break;
    if (e == earlier::other) continue;
    if (!cached) cached.emplace(std::string_view(walk.current.fp.canonical_args));
    const double score = cached->similarity(std::string_view(r.fp.canonical_args), threshold);
    if (score < threshold) continue;
    if (!have_latest) {
      c.latest = r.result;
      newest_failure = &r;
      have_latest = true;
    } else if (r.result != c.latest && !(errors_alike(r, *newest_failure, result_threshold))) {
      break;  // failing differently each time: the agent is learning something
    }
    // The parallel calls of one turn are one attempt (a turn's calls are adjacent).
    if (r.turn != c.counted_turn) ++c.count;
    c.counted_turn = r.turn;
    c.start = r.event_index;
    c.distinct.insert(r.fp.exact);
    c.min_score = std::min(c.min_score, score);
  }
  return c;
}

}  // namespace

std::optional<finding> check_similar_args(const call_history& history, const call_record& current,
                                          const similar_args_rule& rule, const ladder& steps,
                                          bool outcome_aware) {
  const similar_walk walk{history, current, history.calls_in_turns(rule.window - 1, current.turn),
                          outcome_aware, rule.identical_errors};
  if (failed_calls(walk) + 1 < steps.warn_at) return std::nullopt;
  const similar_chain c = count_similar(walk, rule.threshold, rule.result_threshold);
  if (c.count < steps.warn_at || c.distinct.size() < (rule.identical_errors ? 1U : 2U))
    return std::nullopt;
  finding f;
  f.detector = detector_id::similar_args;
  f.identity = c.latest ^ std::hash<std::string>{}(current.tool);
  f.count = c.count;
  f.steps = steps;
  f.loop_start = c.start;
  f.confidence = 0.6 + 0.3 * (c.min_score / 100.0);
  f.tool = current.tool;
  f.rejectable = true;
  return f;
}

}  // namespace loopguard::sdk
