// What a failure looks like, for telling "failed alike" from "failed differently"
// (docs/detectors.md, "Failing alike"): the start and the end of the output, where tools print
// what went wrong, with the volatile parts masked (result_mask.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loopguard::sdk {

inline constexpr std::size_t kSignatureHead = 256;  // bytes from the start of the output
inline constexpr std::size_t kSignatureTail = 512;  // bytes from its end

// The output itself when it is at most head + tail bytes long, else its first and last bytes
// (cut at character boundaries); masked. `output` is valid UTF-8. A Python traceback cut before
// its exception line (wherever it begins in the output) is marked as such.
std::string failure_signature(std::string_view output);

// Two failures are alike when the ratio() of their signatures reaches `threshold` (0..100);
// a threshold of 0 makes every two failures alike. A cut traceback is alike only to an equal
// signature: it says where the failure went through, not what it was.
bool failed_alike(std::string_view a, std::string_view b, double threshold);

}  // namespace loopguard::sdk
