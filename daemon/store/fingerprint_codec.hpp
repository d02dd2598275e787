// The `data` blob of a fingerprint row (docs/storage.md, "Fingerprint data"): every field of
// fingerprint_stats in one little-endian record, so a row is 4 columns and loads in one read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "state/state_rows.hpp"

namespace loopguard::daemon {

void encode_fingerprint(const fingerprint_stats& f, std::string& out);  // replaces `out`
// False when the blob is malformed (short, trailing bytes, a level outside 0..3).
bool decode_fingerprint(std::string_view blob, fingerprint_stats& f);

// The `handoffs` blob of a swarm row (docs/storage.md, "Hand-offs"): empty for none.
void encode_handoffs(const std::vector<handoff>& h, std::string& out);  // replaces `out`
// False when the blob is malformed (short, trailing bytes, more than handoff_log::kMaxKept).
bool decode_handoffs(std::string_view blob, std::vector<handoff>& out);

}  // namespace loopguard::daemon
