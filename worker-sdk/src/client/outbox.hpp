// outbox: what a daemon client still owes the daemon, as a pure state machine (no I/O, no
// locks): judged calls numbered 1, 2, 3, ... and gap declarations for the numbers it dropped,
// in sequence order, kept until the daemon acknowledges them.
//
//  - push() numbers an event; when `capacity` events are already held, the event is dropped
//    instead and its number joins a gap entry (the overflow policy: the newest is dropped, so
//    what is in flight stays whole; docs/sdk.md "Swarm mode").
//  - next() hands out the next message to send, from a cursor: a batch of consecutive events, or
//    one gap. rewind() (a new connection) moves the cursor back to the oldest unacknowledged
//    entry, so everything unacknowledged is sent again in order.
//  - acknowledge(seq) forgets every entry up to seq; refuse(seq) turns one event the daemon
//    refused into a gap (it is never sent again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <variant>

#include "loopguard/protocol.hpp"

namespace loopguard::client {

struct outbox_counters {
  std::uint64_t pushed = 0;            // numbers handed out
  std::uint64_t overflow_dropped = 0;  // pushed while full
  std::uint64_t refused_dropped = 0;   // refused by the daemon
  std::uint64_t resent = 0;            // events handed out by next() a second time or more
  std::uint64_t gaps = 0;              // gap messages handed out by next()
  std::uint64_t charges_dropped = 0;   // charge events a daemon without costs cannot take
  std::uint64_t abandoned = 0;         // events given up by abandon()
};

class outbox {
 public:
  explicit outbox(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Numbers `e` (e.seq is set) and keeps it, or drops it when full. Its number either way.
  std::uint64_t push(protocol::event e);
  // The next message to send: events (at most max_events, consecutive, none of them sent on
  // this connection yet) or a gap; std::monostate when everything was handed out. Without
  // `costs` (the daemon does not list the feature) events go without their cost, and a charge
  // event becomes a gap when its turn comes (it is never sent: a daemon without costs would
  // count it as a call).
  // Without `handoffs` (the feature handoff) events go without their peer.
  std::variant<std::monostate, protocol::events, protocol::gap> next(std::size_t max_events,
                                                                     bool costs = true,
                                                                     bool handoffs = true);
  bool has_unsent() const { return cursor_ < entries_.size(); }
  // A new connection: the daemon holds everything up to `last_ack`; everything after it is
  // sent again, in order. A daemon that lost numbers it had acknowledged (it must not) is told
  // they are gone with a gap, so the session goes on.
  void resume(std::uint64_t last_ack);
  // The daemon holds everything up to `seq` durably.
  void acknowledge(std::uint64_t seq);
  // The daemon expired this incarnation: everything not acknowledged becomes one gap, never
  // sent as events (the daemon cannot tell which of them it counted). A new incarnation then
  // starts from resume(0), which declares 1..acknowledged() lost too; numbering goes on.
  void abandon();
  // The daemon refused event `seq`: it becomes a gap (false when no such event is held).
  bool refuse(std::uint64_t seq);
  // The oldest event held (refusing it is the last resort when the daemon keeps refusing a
  // batch without saying which event); 0 when none.
  std::uint64_t oldest_event() const;

  std::size_t events() const { return events_; }  // events held
  std::uint64_t acknowledged() const { return acked_; }
  std::uint64_t last_seq() const { return next_seq_ - 1; }
  const outbox_counters& counters() const { return counters_; }

 private:
  struct entry {
    protocol::event event;           // when !is_gap
    std::uint64_t from = 0, to = 0;  // when is_gap
    bool is_gap = false;
    std::uint64_t first() const { return is_gap ? from : event.seq; }
    std::uint64_t last() const { return is_gap ? to : event.seq; }
  };
  void drop_into_gap(std::uint64_t seq);

  std::size_t capacity_;
  std::deque<entry> entries_;  // ascending by number, contiguous
  std::size_t cursor_ = 0;     // entries_[cursor_] is the next to hand out
  std::size_t events_ = 0;
  std::uint64_t next_seq_ = 1;
  std::uint64_t acked_ = 0;
  std::uint64_t highest_handed_out_ = 0;  // for counters_.resent
  outbox_counters counters_;
};

}  // namespace loopguard::client
