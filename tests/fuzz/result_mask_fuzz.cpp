// mask_volatile (result_mask.hpp) on arbitrary tool output, directly and as the result
// fingerprint applies it (after the UTF-8 repair).
//
// Contract checked: nothing throws or crashes; valid UTF-8 in gives valid UTF-8 out (masks only
// replace ASCII runs); the result fingerprint of bytes equals that of their repaired form
// (fingerprint.hpp: output that is not valid UTF-8 is repaired first). The header promises no
// idempotence, so none is checked.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "loopguard/fingerprint.hpp"
#include "loopguard/result_mask.hpp"

namespace {

namespace fuzz = loopguard::fuzz;

enum { inputs, valid_input, masked, repaired, kCounters };
fuzz::counters<kCounters> counters("result_mask", {"inputs", "valid_input", "masked", "repaired"});

const loopguard::fingerprinter kFingerprinter;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  const std::string_view output = fuzz::as_view(data, size);
  const std::string out = loopguard::mask_volatile(output);
  const bool valid = fuzz::valid_utf8(output);
  if (valid) {
    counters.add(valid_input);
    LG_FUZZ_CHECK(fuzz::valid_utf8(out), "mask_volatile output is not valid UTF-8");
    if (out != output) counters.add(masked);
  } else {
    counters.add(repaired);
    const std::string fixed = loopguard::utf8::repair(output);
    LG_FUZZ_CHECK(fuzz::valid_utf8(loopguard::mask_volatile(fixed)),
                  "mask_volatile of repaired output is not valid UTF-8");
    for (const bool ok : {true, false}) {
      LG_FUZZ_CHECK(kFingerprinter.of_result(ok, output) == kFingerprinter.of_result(ok, fixed),
                    "result fingerprint differs from that of the repaired output");
    }
  }
  (void)kFingerprinter.of_result(true, output);
  return 0;
}
