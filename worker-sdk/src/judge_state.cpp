#include "judge_state.hpp"

#include <string>
#include <utility>

#include "loopguard/utf8.hpp"

namespace loopguard::sdk {

void judge_state::note(std::size_t index, std::string_view kind, std::string_view tool,
                       std::string_view text, bool ok) {
  judge_event e;
  e.index = index;
  e.kind = std::string(kind);
  e.tool = std::string(utf8::cut(tool, 128));
  e.text = std::string(utf8::cut(text, rule_.event_bytes));
  e.ok = ok;
  bytes_ += e.tool.size() + e.text.size();
  events_.push_back(std::move(e));
  while (!events_.empty() && (events_.size() > rule_.max_events || bytes_ > rule_.max_bytes)) {
    bytes_ -= events_.front().tool.size() + events_.front().text.size();
    events_.pop_front();
  }
}

std::string_view judge_state::due(std::uint64_t turn, bool warned) const {
  if (!rule_.enabled) return {};
  if (asked_at_ && *asked_at_ == turn) return {};  // at most one question per turn
  if (warned && rule_.on_warn) return "warn";
  if (rule_.every_turns == 0 || turn < rule_.after_turn) return {};
  if (!asked_at_ || turn >= *asked_at_ + rule_.every_turns) return "cadence";
  return {};
}

judge_digest judge_state::digest(std::uint64_t turn, std::string_view why,
                                 std::vector<std::string> warning) const {
  judge_digest d;
  d.turn = turn;
  d.why = std::string(why);
  d.warning = std::move(warning);
  d.events.assign(events_.begin(), events_.end());
  return d;
}

std::optional<finding> judge_state::answer(std::uint64_t turn, const std::optional<judge_answer>& a,
                                           std::size_t index) {
  asked_at_ = turn;
  if (!a || a->probability < rule_.threshold) {
    above_ = 0;
    return std::nullopt;
  }
  if (above_++ == 0) first_above_ = index;
  finding f;
  f.detector = detector_id::judge;
  f.identity = identity_of(fixed_loop::judged_stuck);
  f.count = above_;
  f.steps = rule_.steps;
  f.confidence = a->probability;
  f.loop_start = first_above_;
  f.detail = a->reason;
  f.cost = a->cost;
  return f;
}

}  // namespace loopguard::sdk
