#include "loopguard/trace_feed.hpp"

namespace loopguard {

verdict feed(ExecutionEconomicsManager& m, const trace_event& ev) {
  switch (ev.kind) {
    case event_kind::tool_call:
      return m.on_tool_call(ev.tool, ev.args, ev.id, ev.peer);
    case event_kind::tool_result:
      return m.on_tool_result(ev.tool, ev.ok, ev.output, ev.id, ev.cost);
    case event_kind::text:
      return m.on_text(ev.content);
    case event_kind::user:
      return m.on_user_message(ev.content);
    case event_kind::resume:
      return m.on_resume();
  }
  return {};
}

}  // namespace loopguard
