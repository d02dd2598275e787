// The JSON form of a verdict (docs/sdk.md, "Verdict JSON"): what the C API returns for every
// event and what the Python module reads. Defined here once:
//   {"action":"nudge","level":"warn","event_index":2,"detections":[{"detector":"exact",
//    "level":"warn","count":3,"confidence":1,"loop_start":0,"occurrence":1,"tool":"read_file",
//    "message":"...","suggestion":"..."}]}
// Compact, keys in this order, every detection of the verdict (strongest first), then
// "would_have" (observe mode only: the action enforce would have taken). The names are
// those of verdict.hpp (`to_string` of action, severity and detector_id). Always valid UTF-8:
// strings are written with the canonical JSON escaping and repaired (canonical_json.hpp).
#pragma once

#include <string>

#include "loopguard/verdict.hpp"

namespace loopguard {

std::string verdict_json(const verdict& v);
void append_verdict_json(std::string& out, const verdict& v);
void append_detection_json(std::string& out, const detection& d);

}  // namespace loopguard
