// A swarm verdict (protocol::verdict, pushed by loopguardd) as the detection it becomes: in a
// worker's verdict (ExecutionEconomicsManager::on_swarm_verdict) and in `loopguard replay`
// output alike. Detector `global`, count = the swarm's counted calls, confidence 1.
#pragma once

#include <cstddef>

#include "loopguard/protocol.hpp"
#include "loopguard/verdict.hpp"

namespace loopguard {

// `loop_start`: the event the detection is reported at (the judged call that caused or matched
// it). The verdict's tool and message are taken as they are: repair them first if they came
// from outside (utf8::repair).
detection swarm_detection(const protocol::verdict& v, std::size_t loop_start);

}  // namespace loopguard
