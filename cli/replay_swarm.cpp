#include "replay_swarm.hpp"

#include "loopguard/fingerprint.hpp"
#include "loopguard/utf8.hpp"
#include "state/shared_economics_state.hpp"

namespace loopguard::cli {
namespace {

constexpr std::size_t kNoEvent = SIZE_MAX;
constexpr std::size_t kSummaryChars = 80;

daemon::swarm_rules rules_of(const manager_config& config) {
  // validate() has run: an error here cannot happen.
  auto rules = daemon::parse_swarm_rules(config.swarm);
  return rules ? *rules : daemon::swarm_rules{};
}

}  // namespace

struct swarm_replay::impl {
  impl(const manager_config& config, const trace& t)
      : tr(t), state(rules_of(config)), fp(config.fingerprint) {
    // Pair every result with its call up front: replay sees the whole recording.
    call_of.assign(tr.events.size(), kNoEvent);
    answered.assign(tr.events.size(), false);
    call_pairing pairing;
    for (std::size_t i = 0; i < tr.events.size(); ++i) {
      const trace_event& ev = tr.events[i];
      if (ev.kind == event_kind::tool_call) {
        pairing.on_call(ev, i);
      } else if (ev.kind == event_kind::tool_result) {
        if (auto c = pairing.on_result(ev)) {
          call_of[i] = *c;
          answered[*c] = true;
        }
      }
    }
  }

  step apply(std::size_t call_index, std::size_t result_index) {
    const trace_event& call = tr.events[call_index];
    const call_fingerprint cfp = fp.of_call(call.tool, call.args);
    daemon::swarm_event e;
    e.swarm = call.swarm;
    e.worker = call.worker;
    e.tool = call.tool;
    e.summary = std::string(utf8::cut(cfp.normalized, kSummaryChars));
    e.exact = cfp.exact;
    e.structural = cfp.structural;
    const trace_event& at = tr.events[result_index];
    e.t = at.t.value_or(static_cast<double>(result_index));
    if (result_index != call_index) {
      e.ok = at.ok;
      e.result = fp.of_result(at.ok, at.output);
    }
    step out;
    for (auto& v : state.apply(e)) {
      if (v.level == severity::none) {
        out.lifted.push_back(std::move(v));
        continue;
      }
      detection d;
      d.detector = detector_id::global;
      d.level = v.level;
      d.count = v.calls;
      d.confidence = 1.0;
      d.loop_start = call_index;
      d.tool = v.tool;
      d.message = v.message;
      out.detections.push_back(std::move(d));
    }
    return out;
  }

  const trace& tr;
  daemon::shared_economics_state state;
  fingerprinter fp;
  std::vector<std::size_t> call_of;  // result event -> its call event
  std::vector<bool> answered;        // call event -> a result follows in the recording
};

swarm_replay::swarm_replay(const manager_config& config, const trace& tr)
    : impl_(std::make_unique<impl>(config, tr)) {}
swarm_replay::~swarm_replay() = default;

swarm_replay::step swarm_replay::on_event(std::size_t index) {
  const trace_event& ev = impl_->tr.events[index];
  if (ev.kind == event_kind::tool_call && !impl_->answered[index]) {
    return impl_->apply(index, index);
  }
  if (ev.kind == event_kind::tool_result && impl_->call_of[index] != kNoEvent) {
    return impl_->apply(impl_->call_of[index], index);
  }
  return {};
}

status swarm_replay::validate(const manager_config& config) {
  auto rules = daemon::parse_swarm_rules(config.swarm);  // validates
  return rules ? status() : rules.error();
}

}  // namespace loopguard::cli
