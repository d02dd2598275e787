#include "client/outbox.hpp"

#include <algorithm>
#include <utility>

namespace loopguard::client {

std::uint64_t outbox::push(protocol::event e) {
  const std::uint64_t seq = next_seq_++;
  ++counters_.pushed;
  if (events_ >= capacity_) {
    ++counters_.overflow_dropped;
    drop_into_gap(seq);
    return seq;
  }
  e.seq = seq;
  entries_.push_back(entry{std::move(e)});
  ++events_;
  return seq;
}

void outbox::drop_into_gap(std::uint64_t seq) {
  // A gap still waiting to be handed out may simply grow; one already sent stays as sent.
  if (!entries_.empty() && entries_.back().is_gap && entries_.back().to + 1 == seq &&
      cursor_ < entries_.size()) {
    entries_.back().to = seq;
    return;
  }
  entry g;
  g.is_gap = true;
  g.from = g.to = seq;
  entries_.push_back(std::move(g));
}

std::variant<std::monostate, protocol::events, protocol::gap> outbox::next(std::size_t max_events,
                                                                           bool costs,
                                                                           bool handoffs) {
  if (cursor_ >= entries_.size()) return std::monostate{};
  entry& first = entries_[cursor_];
  if (!costs && !first.is_gap && first.event.charge) {
    first.is_gap = true;
    first.from = first.to = first.event.seq;
    first.event = {};
    --events_;
    ++counters_.charges_dropped;
  }
  if (first.is_gap) {
    ++cursor_;
    ++counters_.gaps;
    highest_handed_out_ = std::max(highest_handed_out_, first.to);
    return protocol::gap{first.from, first.to};
  }
  protocol::events batch;
  while (cursor_ < entries_.size() && !entries_[cursor_].is_gap &&
         !(!costs && entries_[cursor_].event.charge) &&
         batch.items.size() < std::max<std::size_t>(max_events, 1)) {
    const protocol::event& e = entries_[cursor_++].event;
    if (e.seq <= highest_handed_out_) ++counters_.resent;
    highest_handed_out_ = std::max(highest_handed_out_, e.seq);
    batch.items.push_back(e);
    if (!costs) batch.items.back().spent = {};
    if (!handoffs) batch.items.back().peer.clear();
  }
  return batch;
}

void outbox::acknowledge(std::uint64_t seq) {
  acked_ = std::max(acked_, seq);
  while (!entries_.empty() && entries_.front().first() <= acked_) {
    entry& front = entries_.front();
    if (front.is_gap && front.to > acked_) {
      front.from = acked_ + 1;  // the rest of the gap is still owed
      break;
    }
    if (!front.is_gap) --events_;
    entries_.pop_front();
    if (cursor_ > 0) --cursor_;
  }
}

void outbox::resume(std::uint64_t last_ack) {
  acknowledge(last_ack);
  if (last_ack < acked_) {
    entry g;
    g.is_gap = true;
    g.from = last_ack + 1;
    g.to = acked_;
    entries_.push_front(std::move(g));
  }
  cursor_ = 0;
}

void outbox::abandon() {
  counters_.abandoned += events_;
  entries_.clear();
  events_ = 0;
  cursor_ = 0;
  if (last_seq() > acked_) {
    entry g;
    g.is_gap = true;
    g.from = acked_ + 1;
    g.to = last_seq();
    entries_.push_back(std::move(g));
  }
}

bool outbox::refuse(std::uint64_t seq) {
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const entry& x) { return !x.is_gap && x.event.seq == seq; });
  if (it == entries_.end()) return false;
  ++counters_.refused_dropped;
  --events_;
  it->is_gap = true;
  it->from = it->to = seq;
  it->event = {};
  return true;
}

std::uint64_t outbox::oldest_event() const {
  const auto it =
      std::find_if(entries_.begin(), entries_.end(), [](const entry& x) { return !x.is_gap; });
  return it == entries_.end() ? 0 : it->event.seq;
}

}  // namespace loopguard::client
