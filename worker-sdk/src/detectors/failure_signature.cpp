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

// A Python traceback that stops inside its frames: the output was cut before the exception
// line, the one line that says what failed (a framework's or a recorder's cut of a long
// output). Every non-empty line after its last `Traceback (most recent call last):` is
// indented, as a frame's lines are: no exception line follows.
bool cut_traceback(std::string_view output) {
  constexpr std::string_view kHeader = "Traceback (most recent call last):";
  const auto at = output.rfind(kHeader);
  if (at == std::string_view::npos) return false;
  bool frames = false;
  for (std::size_t line = at + kHeader.size(); line < output.size();) {
    const std::size_t end = std::min(output.find('\n', line), output.size());
    const std::string_view text = output.substr(line, end - line);
    if (text.find_first_not_of(" \t\r") != std::string_view::npos) {
      if (text[0] != ' ' && text[0] != '\t') return false;  // the exception line, or other output
      frames = true;
    }
    line = end + 1;
  }
  return frames;
}

// Begins the signature of a cut traceback (masked output cannot hold it).
constexpr std::string_view kCutMark = "\x01cut traceback\x01\n";

}  // namespace

std::string failure_signature(std::string_view output) {
  std::string sig(cut_traceback(output) ? kCutMark : std::string_view());
  if (output.size() <= kSignatureHead + kSignatureTail) return sig + mask_volatile(output);
  sig += mask_volatile(utf8::cut(output, kSignatureHead));
  sig += "\n...\n";
  sig += mask_volatile(last_bytes(output, kSignatureTail));
  return sig;
}

bool failed_alike(std::string_view a, std::string_view b, double threshold) {
  if (threshold <= 0 || a == b) return true;
  // Without its exception line a traceback says where, not what: two of them through the same
  // frames may be two different errors. Alike only when equal.
  if (a.starts_with(kCutMark) || b.starts_with(kCutMark)) return false;
  return similarity::ratio(a, b, threshold) >= threshold;
}

}  // namespace loopguard::sdk
