// The swarm id one run of `replay --daemon` or `simulate` uses on the daemon: the recording's
// swarm plus a run suffix, so that a long-running daemon's earlier counts never leak in.
#pragma once

#include <string>
#include <string_view>

namespace loopguard::cli {

// 16 random hex digits, new for every call.
std::string random_run_tag();

// `swarm~r<tag>`; a valid identifier of at most protocol::kMaxNameBytes bytes when `swarm` is
// one. A swarm too long for the suffix is cut at a code-point boundary and followed by a hash
// of the whole name (`<cut>~h<hash>~r<tag>`), so two long names stay apart.
std::string run_swarm_id(std::string_view swarm, std::string_view tag);

}  // namespace loopguard::cli
