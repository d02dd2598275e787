#include "server/worker_url.hpp"

#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::daemon {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The swarm named by one `swarm=VALUE` parameter.
result<std::string> swarm_value(std::string_view raw) {
  auto value = percent_decode(raw);
  if (!value) return value.error().with_context("swarm in the URL: ");
  if (value->empty()) return status::error("swarm in the URL is empty");
  if (value->size() > protocol::kMaxNameBytes) {
    return status::error("swarm in the URL is longer than " +
                         std::to_string(protocol::kMaxNameBytes) + " bytes");
  }
  if (!utf8::is_identifier(*value)) {
    return status::error(
        "swarm in the URL is not valid UTF-8 (an identifier may not hold invalid bytes or "
        "U+FFFD)");
  }
  return value;
}

}  // namespace

result<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return status::error("bad percent-encoding at byte " + std::to_string(i) +
                           " (expected % and two hex digits)");
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool is_worker_path(std::string_view target) {
  return target.substr(0, target.find('?')) == kWorkerPath;
}

result<std::optional<std::string>> url_swarm(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return std::optional<std::string>();
  std::string_view query = target.substr(q + 1);
  std::optional<std::string> swarm;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = param.find('=');
    if (param.substr(0, eq) != "swarm") continue;
    if (swarm) return status::error("swarm is given twice in the URL");
    auto value = swarm_value(eq == std::string_view::npos ? "" : param.substr(eq + 1));
    if (!value) return value.error();
    swarm = std::move(*value);
  }
  return swarm;
}

}  // namespace loopguard::daemon
