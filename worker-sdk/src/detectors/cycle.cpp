#include "cycle.hpp"

#include <algorithm>

namespace loopguard::sdk {

std::optional<finding> check_cycle(const call_history& history, const call_record& current,
                                   const cycle_rule& rule, bool outcome_aware) {
  // seq(0) is the current call, seq(j) the j-th call before it.
  const auto seq = [&](std::size_t j) -> const call_record& {
    return j == 0 ? current : history.newest(j - 1);
  };
  const std::size_t n = history.size() + 1;
  const auto equal = [&](std::size_t a, std::size_t b) {
    const call_record& x = seq(a);
    const call_record& y = seq(b);
    if (x.fp.exact != y.fp.exact) return false;
    if (outcome_aware && x.answered && y.answered && x.result != y.result) return false;
    return true;
  };
  std::uint32_t best_reps = 0;
  std::size_t best_k = 0, best_len = 0;
  for (std::size_t k = rule.min_length; k <= rule.max_length && 2 * k <= n; ++k) {
    bool distinct = false;
    for (std::size_t j = 1; j < k && !distinct; ++j) distinct = seq(j).fp.exact != seq(0).fp.exact;
    if (!distinct) continue;
    std::size_t len = k;
    while (len < n && equal(len - k, len)) ++len;
    if (len < 2 * k) continue;
    if (best_k != 0 && k % best_k == 0) continue;  // a multiple of a shorter cycle already found
    const auto reps = static_cast<std::uint32_t>(rule.count_started ? (len + k - 1) / k : len / k);
    if (reps > best_reps) {
      best_reps = reps;
      best_k = k;
      best_len = len;
    }
  }
  if (best_k == 0 || best_reps < rule.steps.warn_at) return std::nullopt;
  // Identity: the cycle's calls in their smallest rotation, so it is the same loop whichever call
  // of it is the current one.
  std::vector<std::uint64_t> pattern;
  for (std::size_t j = best_k; j-- > 0;) pattern.push_back(seq(j).fp.exact);
  auto rot = pattern;
  std::rotate(rot.begin(), std::min_element(rot.begin(), rot.end()), rot.end());
  std::uint64_t id = 0x9e3779b97f4a7c15ULL;
  for (auto v : rot) id = (id ^ v) * 0x100000001b3ULL;
  finding f;
  f.detector = detector_id::cycle;
  f.identity = id;
  f.count = best_reps;
  f.steps = rule.steps;
  f.loop_start = seq(best_len - 1).event_index;
  f.confidence = 0.9;
  f.tool = current.tool;
  for (std::size_t j = best_k; j-- > 0;) {
    if (!f.detail.empty()) f.detail += " -> ";
    f.detail += seq(j).tool;
  }
  f.rejectable = true;
  return f;
}

}  // namespace loopguard::sdk
