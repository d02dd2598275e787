#include "global_verdicts.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "escalation.hpp"
#include "loopguard/swarm_detection.hpp"

namespace loopguard::sdk {

bool global_verdicts::matches_calls(const key& k, const entry& e) {
  return e.verdict.level >= severity::critical &&
         (k.kind == "exact" || k.kind == "structural" || k.kind == "budget");
}

void global_verdicts::lift(const key& k) {
  const auto it = active_.find(k);
  if (it == active_.end()) return;
  if (matches_calls(it->first, it->second)) --critical_;
  if (it->second.waiting) std::erase(waiting_, k);
  active_.erase(it);
}

void global_verdicts::record(protocol::verdict v) {
  key k{v.kind, v.fingerprint};
  if (v.level == severity::none) return lift(k);
  auto it = active_.find(k);
  if (it != active_.end() && it->second.verdict.level == v.level) return;  // known already
  if (it == active_.end()) {
    if (active_.size() >= kMaxActive) return;
    it = active_.emplace(k, entry{}).first;
  } else if (matches_calls(it->first, it->second)) {
    --critical_;
  }
  entry& e = it->second;
  e.verdict = std::move(v);
  if (matches_calls(k, e)) ++critical_;
  if (!e.waiting) waiting_.push_back(k);
  e.waiting = true;
}

void global_verdicts::deliver(std::vector<detection>& out, std::size_t index, const key* except) {
  for (const key& k : waiting_) {
    const auto it = active_.find(k);
    if (it == active_.end() || !it->second.waiting) continue;  // defensive: lift() unlists
    it->second.waiting = false;
    if (except == nullptr || !(k == *except)) out.push_back(detection_of(k, index));
  }
  waiting_.clear();
}

action global_verdicts::merge(std::vector<detection>& detections, std::size_t index,
                              const key* match, action local, bool rejects) {
  std::vector<detection> all;
  if (match) all.push_back(detection_of(*match, index));
  const std::size_t locals = detections.size();
  std::move(detections.begin(), detections.end(), std::back_inserter(all));
  deliver(all, index, match);
  detections = std::move(all);
  if (detections.empty()) return local;
  const severity top = std::max_element(detections.begin(), detections.end(), [](auto& a, auto& b) {
                         return a.level < b.level;
                       })->level;
  action act = action_for(top, false);
  if (match && detections.front().level == top) {
    act = action_for(top, rejects);
  } else if (locals > 0 && detections[match ? 1 : 0].level == top) {
    act = local;
  }
  // Stable: the order above decides between equal levels.
  std::stable_sort(detections.begin(), detections.end(),
                   [](const detection& a, const detection& b) { return a.level > b.level; });
  return act;
}

const std::pair<const global_verdicts::key, global_verdicts::entry>* global_verdicts::find(
    const char* kind, std::uint64_t fingerprint) const {
  const auto it = active_.find(key{kind, fingerprint});
  return it == active_.end() ? nullptr : &*it;
}

const global_verdicts::key* global_verdicts::find_critical(std::uint64_t exact,
                                                           std::uint64_t structural) const {
  const auto level = [](const auto* e) {
    return e != nullptr && e->second.verdict.level >= severity::critical ? e->second.verdict.level
                                                                         : severity::none;
  };
  const auto* by_exact = find("exact", exact);
  const auto* by_structural = find("structural", structural);
  const auto* by_budget = find("budget", 0);  // a spent budget refuses every call
  const auto* best = level(by_exact) >= level(by_structural) ? by_exact : by_structural;
  if (level(by_budget) > level(best)) best = by_budget;
  return level(best) == severity::none ? nullptr : &best->first;
}

detection global_verdicts::detection_of(const key& k, std::size_t index) const {
  return swarm_detection(active_.at(k).verdict, index);
}

}  // namespace loopguard::sdk
