#include "store/event_log.hpp"

#include <utility>

#include "loopguard/utf8.hpp"
#include "store/byte_codec.hpp"

namespace loopguard::daemon {
namespace {

enum class op : std::uint8_t { context = 1, event = 2, complete = 3 };
constexpr std::uint8_t kOk = 1, kHasResult = 2;

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
  w.put(static_cast<std::uint8_t>((e.ok ? kOk : 0) | (e.result ? kHasResult : 0)));
}

void event_log_writer::complete(std::string_view swarm) {
  if (out_.empty()) out_.push_back(static_cast<char>(kFormat));
  byte_writer w(out_);
  w.put(op::complete);
  w.str(swarm);
}

std::string event_log_writer::take() {
  has_context_ = false;
  return std::exchange(out_, {});
}

std::optional<std::string> replay_log_record(std::string_view record, shared_economics_state& state,
                                             std::size_t* repaired) {
  // Written before names were checked at the boundary, a record may hold invalid UTF-8.
  std::size_t fixed = 0;
  const auto repair = [&](std::string& s) { fixed += utf8::repair_in_place(s); };
  byte_reader r(record);
  std::uint8_t format = 0;
  if (!r.get(format) || format != event_log_writer::kFormat) {
    return "a log record has an unknown format (" + std::to_string(format) + ")";
  }
  swarm_event e;
  bool has_context = false;
  while (!r.at_end()) {
    op o{};
    if (!r.get(o)) return "a log record is truncated";
    std::string_view a, b;
    switch (o) {
      case op::context:
        if (!r.str(a) || !r.str(b)) return "a log record has a truncated context";
        e.swarm = a;
        e.worker = b;
        repair(e.swarm);
        repair(e.worker);
        has_context = true;
        break;
      case op::event: {
        std::uint64_t result = 0;
        std::uint8_t flags = 0;
        if (!r.str(a) || !r.str(b) || !r.get(e.exact) || !r.get(e.structural) || !r.get(result) ||
            !r.get(e.t) || !r.get(flags)) {
          return "a log record has a truncated event";
        }
        if (!has_context) return "a log record has an event before its context";
        e.tool = a;
        e.summary = b;
        repair(e.tool);
        repair(e.summary);
        e.ok = (flags & kOk) != 0;
        e.result = (flags & kHasResult) ? std::optional<std::uint64_t>(result) : std::nullopt;
        state.apply(e);
        break;
      }
      case op::complete: {
        if (!r.str(a)) return "a log record has a truncated swarm_complete";
        std::string swarm(a);
        repair(swarm);
        state.complete(swarm);
        break;
      }
      default:
        return "a log record has an unknown operation (" + std::to_string(static_cast<int>(o)) +
               ")";
    }
  }
  if (repaired) *repaired += fixed;
  return std::nullopt;
}

}  // namespace loopguard::daemon
