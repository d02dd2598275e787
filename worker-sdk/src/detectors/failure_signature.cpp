#include "failure_signature.hpp"

#include "loopguard/result_mask.hpp"
#include "loopguard/similarity.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::sdk {
namespace {

// The last `max_bytes` bytes of `s` or fewer, starting at a character boundary.
std::string_view last_bytes(std::string_view s, std::size_t max_bytes) {
  std::size_t start = s.size() - max_bytes;
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) ++start;
  return s.substr(start);
}

}  // namespace

std::string failure_signature(std::string_view output) {
  if (output.size() <= kSignatureHead + kSignatureTail) return mask_volatile(output);
  std::string sig = mask_volatile(utf8::cut(output, kSignatureHead));
  sig += "\n...\n";
  sig += mask_volatile(last_bytes(output, kSignatureTail));
  return sig;
}

bool failed_alike(std::string_view a, std::string_view b, double threshold) {
  if (threshold <= 0 || a == b) return true;
  return similarity::ratio(a, b, threshold) >= threshold;
}

}  // namespace loopguard::sdk
