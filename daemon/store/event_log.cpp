#include "store/event_log.hpp"

#include <utility>

#include "loopguard/utf8.hpp"
#include "store/byte_codec.hpp"

namespace loopguard::daemon {
namespace {

enum class op : std::uint8_t { context = 1, event = 2, complete = 3, expire = 4 };  // 4: schema 4
// Format 2 writes a cost and a peer only when the event has one (most have neither).
constexpr std::uint8_t kOk = 1, kHasResult = 2, kCharge = 4, kHasCost = 8, kHasPeer = 16;
constexpr std::uint8_t kOldestFormat = 1;  // no cost, no charge

}  // namespace

void event_log_writer::context(std::string_view swarm, std::string_view worker) {
  if (has_context_ && swarm == swarm_ && worker == worker_) return;
  byte_writer w(out_);
  w.put(op::context);
  w.str(swarm);
  w.str(worker);
  swarm_ = swarm;
  worker_ = worker;
  has_context_ = true;
}

void event_log_writer::event(const swarm_event& e) {
  if (out_.empty()) out_.push_back(static_cast<char>(kFormat));
  context(e.swarm, e.worker);
  byte_writer w(out_);
  w.put(op::event);
  w.str(e.tool);
  w.str(e.summary);
  w.put(e.exact);
  w.put(e.structural);
  w.put(e.result.value_or(0));
  w.put(e.t);
  const bool cost = !e.spent.empty(), peer = !e.peer.empty();
  w.put(static_cast<std::uint8_t>((e.ok ? kOk : 0) | (e.result ? kHasResult : 0) |
                                  (e.charge ? kCharge : 0) | (cost ? kHasCost : 0) |
                                  (peer ? kHasPeer : 0)));
  if (cost) {
    w.put(e.spent.tokens);
    w.put(e.spent.amount);
  }
  if (peer) w.str(e.peer);
}

void event_log_writer::complete(std::string_view swarm) {
  if (out_.empty()) out_.push_back(static_cast<char>(kFormat));
  byte_writer w(out_);
  w.put(op::complete);
  w.str(swarm);
}

void event_log_writer::expire(std::string_view swarm, double wall) {
  if (out_.empty()) out_.push_back(static_cast<char>(kFormat));
  byte_writer w(out_);
  w.put(op::expire);
  w.str(swarm);
  w.put(wall);
}

std::string event_log_writer::take() {
  has_context_ = false;
  return std::exchange(out_, {});
}

namespace {

// Applies a record's operations one at a time. Written before names were checked at the
// boundary, a record may hold invalid UTF-8: every string is repaired.
class log_replayer {
 public:
  log_replayer(std::string_view record, shared_economics_state& state)
      : r_(record), state_(state) {}

  status run() {
    if (!r_.get(format_) || format_ < kOldestFormat || format_ > event_log_writer::kFormat) {
      return status::error("a log record has an unknown format (" + std::to_string(format_) + ")");
    }
    while (!r_.at_end()) {
      op o{};
      if (!r_.get(o)) return status::error("a log record is truncated");
      status s = step(o);
      if (!s.ok()) return s;
    }
    return {};
  }
  std::size_t repaired() const { return repaired_; }

 private:
  status step(op o) {
    switch (o) {
      case op::context:
        return context();
      case op::event:
        return event();
      case op::complete:
        return complete();
      case op::expire:
        return expire();
    }
    return status::error("a log record has an unknown operation (" +
                         std::to_string(static_cast<int>(o)) + ")");
  }

  status context() {
    std::string_view swarm, worker;
    if (!r_.str(swarm) || !r_.str(worker)) {
      return status::error("a log record has a truncated context");
    }
    e_.swarm = swarm;
    e_.worker = worker;
    repair(e_.swarm);
    repair(e_.worker);
    has_context_ = true;
    return {};
  }

  status event() {
    std::string_view tool, summary, peer;
    std::uint64_t result = 0;
    std::uint8_t flags = 0;
    if (!r_.str(tool) || !r_.str(summary) || !r_.get(e_.exact) || !r_.get(e_.structural) ||
        !r_.get(result) || !r_.get(e_.t) || !r_.get(flags)) {
      return status::error("a log record has a truncated event");
    }
    if (format_ < 2) flags &= kOk | kHasResult;  // format 1 had no more
    e_.spent = {};
    if ((flags & kHasCost) && (!r_.get(e_.spent.tokens) || !r_.get(e_.spent.amount))) {
      return status::error("a log record has a truncated event");
    }
    if ((flags & kHasPeer) && !r_.str(peer)) {
      return status::error("a log record has a truncated event");
    }
    if (!has_context_) return status::error("a log record has an event before its context");
    e_.tool = tool;
    e_.summary = summary;
    repair(e_.tool);
    repair(e_.summary);
    e_.ok = (flags & kOk) != 0;
    e_.result = (flags & kHasResult) ? std::optional<std::uint64_t>(result) : std::nullopt;
    e_.charge = (flags & kCharge) != 0;
    e_.peer = peer;
    repair(e_.peer);
    state_.apply(e_);
    return {};
  }

  status complete() {
    std::string_view name;
    if (!r_.str(name)) return status::error("a log record has a truncated swarm_complete");
    std::string swarm(name);
    repair(swarm);
    state_.complete(swarm);
    return {};
  }

  status expire() {
    std::string_view name;
    double wall = 0;
    if (!r_.str(name) || !r_.get(wall)) {
      return status::error("a log record has a truncated swarm expiry");
    }
    std::string swarm(name);
    repair(swarm);
    state_.expire(swarm, wall);
    return {};
  }

  void repair(std::string& s) { repaired_ += utf8::repair_in_place(s); }

  byte_reader r_;
  std::uint8_t format_ = 0;
  shared_economics_state& state_;
  swarm_event e_;
  bool has_context_ = false;
  std::size_t repaired_ = 0;
};

}  // namespace

status replay_log_record(std::string_view record, shared_economics_state& state,
                         std::size_t* repaired) {
  log_replayer replayer(record, state);
  status s = replayer.run();
  if (s.ok() && repaired) *repaired += replayer.repaired();
  return s;
}

}  // namespace loopguard::daemon
