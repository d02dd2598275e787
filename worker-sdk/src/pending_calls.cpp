#include "pending_calls.hpp"

#include <algorithm>
#include <utility>

namespace loopguard::sdk {
namespace {

judged_call judged_of(const call_record& rec) {
  judged_call c;
  c.tool = rec.tool;
  c.summary = summary_of(rec.fp);
  c.exact = rec.fp.exact;
  c.structural = rec.fp.structural;
  c.call_event = rec.event_index;
  c.peer = rec.peer;
  return c;
}

}  // namespace

void pending_calls::on_call(const call_record& rec, bool refused, const sink& out) {
  while (!calls_.empty() && calls_.front().call_event < boundary_) send_front(out);
  if (refused) {
    emit(judged_of(rec), out);
    return;
  }
  calls_.push_back(judged_of(rec));
  if (calls_.size() > kMaxWaiting) send_front(out);
}

void pending_calls::on_result(const call_record* rec, bool ok, std::uint64_t result,
                              std::size_t index, const protocol::cost& spent, const sink& out) {
  boundary_ = index + 1;
  std::optional<judged_call> call;
  if (rec != nullptr) call = take(rec->event_index);
  if (!call) {  // no call, or sent already without a result
    if (rec != nullptr && !spent.empty()) {
      judged_call c = judged_of(*rec);
      c.charge = true;
      c.spent = spent;
      out(c);
    } else {
      charge(spent, out);
    }
    return;
  }
  call->ok = ok;
  call->result = result;
  call->spent += spent;
  emit(*call, out);
}

void pending_calls::charge(const protocol::cost& spent, const sink& out) {
  if (spent.empty()) return;
  if (!calls_.empty()) {
    calls_.back().spent += spent;
    return;
  }
  if (!last_sent_) return;
  judged_call c = *last_sent_;
  c.charge = true;
  c.spent = spent;
  out(c);
}

void pending_calls::emit(const judged_call& call, const sink& out) {
  last_sent_ = call;
  last_sent_->spent = {};
  last_sent_->result.reset();
  out(call);
}

void pending_calls::flush(const sink& out) {
  while (!calls_.empty()) send_front(out);
}

std::optional<judged_call> pending_calls::take(std::size_t call_event) {
  const auto it = std::find_if(calls_.begin(), calls_.end(),
                               [&](const judged_call& c) { return c.call_event == call_event; });
  if (it == calls_.end()) return std::nullopt;
  std::optional<judged_call> call(std::move(*it));
  calls_.erase(it);
  return call;
}

// Out of the queue before the sink sees it, so the queue is consistent whatever the sink does.
void pending_calls::send_front(const sink& out) {
  const judged_call call = std::move(calls_.front());
  calls_.pop_front();
  emit(call, out);
}

}  // namespace loopguard::sdk
