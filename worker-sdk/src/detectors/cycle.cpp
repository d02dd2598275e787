#include "cycle.hpp"

#include <algorithm>

namespace loopguard::sdk {
namespace {

// The calls walked backwards: at(0) is the current call, at(j) the j-th call before it.
struct backwards {
  const call_history& history;
  const call_record& current;

  std::size_t size() const { return history.size() + 1; }
  const call_record& at(std::size_t j) const { return j == 0 ? current : history.newest(j - 1); }
};

struct cycle_found {
  std::uint32_t reps = 0;
  std::size_t length = 0;  // calls in one repetition; 0: none
  std::size_t span = 0;    // calls the repetitions cover
};

// The cycle of min_length..max_length calls ending at the current call that repeats most.
cycle_found longest_cycle(const backwards& seq, const cycle_rule& rule, bool outcome_aware) {
  const std::size_t n = seq.size();
  const auto equal = [&](std::size_t a, std::size_t b) {
    const call_record& x = seq.at(a);
    const call_record& y = seq.at(b);
    if (x.fp.exact != y.fp.exact) return false;
    if (outcome_aware && x.answered && y.answered && x.result != y.result) return false;
    return true;
  };
  cycle_found best;
  for (std::size_t k = rule.min_length; k <= rule.max_length && 2 * k <= n; ++k) {
    bool distinct = false;
    for (std::size_t j = 1; j < k && !distinct; ++j) {
      distinct = seq.at(j).fp.exact != seq.at(0).fp.exact;
    }
    if (!distinct) continue;
    std::size_t len = k;
    while (len < n && equal(len - k, len)) ++len;
    if (len < 2 * k) continue;
    if (best.length != 0 && k % best.length == 0) continue;  // a multiple of a shorter cycle
    const auto reps = static_cast<std::uint32_t>(rule.count_started ? (len + k - 1) / k : len / k);
    if (reps > best.reps) best = {reps, k, len};
  }
  return best;
}

// The cycle's calls in their smallest rotation, so it is the same loop whichever call of it is
// the current one.
std::uint64_t cycle_identity(const backwards& seq, std::size_t length) {
  std::vector<std::uint64_t> rot;
  for (std::size_t j = length; j-- > 0;) rot.push_back(seq.at(j).fp.exact);
  std::rotate(rot.begin(), std::min_element(rot.begin(), rot.end()), rot.end());
  std::uint64_t id = 0x9e3779b97f4a7c15ULL;
  for (auto v : rot) id = (id ^ v) * 0x100000001b3ULL;
  return id;
}

}  // namespace

std::optional<finding> check_cycle(const call_history& history, const call_record& current,
                                   const cycle_rule& rule, bool outcome_aware) {
  const backwards seq{history, current};
  const cycle_found best = longest_cycle(seq, rule, outcome_aware);
  if (best.length == 0 || best.reps < rule.steps.warn_at) return std::nullopt;
  finding f;
  f.detector = detector_id::cycle;
  f.identity = cycle_identity(seq, best.length);
  f.count = best.reps;
  f.steps = rule.steps;
  if (rule.critical_needs_same_result && !outcome_aware && f.steps.critical_at > 0 &&
      best.reps >= f.steps.critical_at &&
      longest_cycle(seq, rule, true).reps < f.steps.critical_at) {
    // The calls cycle, but their results move on: a warning at most.
    f.steps.critical_at = 0;
    f.steps.terminate_at = 0;
  }
  f.loop_start = seq.at(best.span - 1).event_index;
  f.confidence = 0.9;
  f.tool = current.tool;
  for (std::size_t j = best.length; j-- > 0;) {
    if (!f.detail.empty()) f.detail += " -> ";
    f.detail += seq.at(j).tool;
  }
  f.rejectable = true;
  return f;
}

}  // namespace loopguard::sdk
