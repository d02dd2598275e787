#include "loopguard/swarm_detection.hpp"

namespace loopguard {

detection swarm_detection(const protocol::verdict& v, std::size_t loop_start) {
  detection d;
  d.detector = v.kind == "budget"    ? detector_id::budget
               : v.kind == "handoff" ? detector_id::handoff
                                     : detector_id::global;
  d.level = v.level;
  d.count = v.calls;
  d.confidence = 1.0;
  d.loop_start = loop_start;
  d.tool = v.tool;
  d.message = v.message;
  return d;
}

}  // namespace loopguard
