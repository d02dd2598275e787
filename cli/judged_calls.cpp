#include "judged_calls.hpp"

#include "loopguard/utf8.hpp"

namespace loopguard::cli {
namespace {

constexpr std::size_t kNoEvent = SIZE_MAX;

// The tool as the SDK's daemon client sends it (it makes every field valid for the daemon):
// cut at a code-point boundary to the protocol's limit, never empty. Trace strings are
// already valid UTF-8.
std::string wire_tool(const std::string& tool) {
  std::string out(utf8::cut(tool, protocol::kMaxToolBytes));
  if (out.empty()) out = "?";
  return out;
}

}  // namespace

judged_calls::judged_calls(const trace& tr, const fingerprint_options& options)
    : tr_(tr), fp_(options) {
  call_of_.assign(tr.events.size(), kNoEvent);
  answered_.assign(tr.events.size(), false);
  call_pairing pairing;
  for (std::size_t i = 0; i < tr.events.size(); ++i) {
    const trace_event& ev = tr.events[i];
    if (ev.kind == event_kind::tool_call) {
      pairing.on_call(ev, i);
    } else if (ev.kind == event_kind::tool_result) {
      if (auto c = pairing.on_result(ev)) {
        call_of_[i] = *c;
        answered_[*c] = true;
      }
    }
  }
}

std::optional<judged_call> judged_calls::at(std::size_t index) const {
  const trace_event& ev = tr_.events[index];
  if (ev.kind == event_kind::tool_call && !answered_[index]) {
    return judged_call{index, event_of(index, index)};
  }
  if (ev.kind == event_kind::tool_result && call_of_[index] != kNoEvent) {
    return judged_call{call_of_[index], event_of(call_of_[index], index)};
  }
  return std::nullopt;
}

protocol::event judged_calls::event_of(std::size_t call_index, std::size_t result_index) const {
  const trace_event& call = tr_.events[call_index];
  const call_fingerprint cfp = fp_.of_call(call.tool, call.args);
  protocol::event e;
  e.tool = wire_tool(call.tool);
  e.summary = summary_of(cfp);
  e.exact = cfp.exact;
  e.structural = cfp.structural;
  // As the SDK's client sends it: a peer that is no worker name for the daemon is left out.
  if (call.peer.size() <= protocol::kMaxNameBytes) e.peer = call.peer;
  const trace_event& at = tr_.events[result_index];
  e.t = at.t.value_or(static_cast<double>(result_index));
  if (result_index != call_index) {
    e.ok = at.ok;
    e.result = fp_.of_result(at.ok, at.output);
    e.spent = at.cost;
  }
  return e;
}

}  // namespace loopguard::cli
