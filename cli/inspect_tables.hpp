// `loopguard inspect`'s text: the swarms, and one swarm's workers, top fingerprints and verdicts,
// as aligned tables (text_table). Pure: views in, valid UTF-8 text out. Names and summaries are
// cut with "…" to keep a row on a screen; --json has them whole.
#pragma once

#include <string>
#include <vector>

#include "inspect_view.hpp"

namespace loopguard::cli {

// Rows of the workers table beyond this are left out, with a line saying how many.
inline constexpr std::size_t kMaxWorkerRows = 100;

// One row per swarm, or a line saying there is none.
std::string swarms_text(const std::vector<swarm_summary_view>& swarms);

// A heading with the swarm's counts, then its workers, top fingerprints and active verdicts.
std::string swarm_text(const swarm_detail_view& detail);

}  // namespace loopguard::cli
