#include "call_history.hpp"

namespace loopguard::sdk {

void call_history::push(call_record&& r) {
  calls_.push_back(std::move(r));
  while (calls_.size() > capacity_) {
    calls_.pop_front();
    if (hidden_ > 0) --hidden_;
  }
}

call_record* call_history::find_open(std::string_view tool, std::string_view id) {
  for (auto& c : calls_) {
    if (c.answered || !c.ran) continue;
    if (!id.empty() ? c.id == id : c.tool == tool) return &c;
  }
  return nullptr;
}

std::size_t call_history::calls_in_turns(std::size_t turns, std::size_t open_turn) const {
  std::size_t n = 0;
  std::size_t turn = open_turn;
  for (; n < size(); ++n) {
    const std::size_t t = newest(n).turn;
    if (t == turn) continue;  // a turn's calls are adjacent
    if (turns == 0) break;
    --turns;
    turn = t;
  }
  return n;
}

bool call_history::seen_exact(std::uint64_t exact, std::size_t upto) const {
  for (std::size_t i = 0; i < calls_.size() && calls_[i].event_index < upto; ++i) {
    if (calls_[i].fp.exact == exact) return true;
  }
  return false;
}

}  // namespace loopguard::sdk
