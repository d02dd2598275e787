// Driver for callgrind: 2000 x protocol::parse of one 64-event JSON frame (the daemon's ingest
// path). Not a test; scripts/bench/protocol_parse builds it at HEAD and at a baseline commit and
// prints both instruction counts. -DLOOPGUARD_PARSE_OUT_PARAM builds it against the older
// `std::optional<error> parse(text, message&)` signature.
#include <cstdio>
#include <string>
#include <variant>

#include "loopguard/hex.hpp"
#include "loopguard/protocol.hpp"

namespace {

std::string frame(std::size_t n) {
  std::string s = R"({"type":"events","events":[)";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += ',';
    const std::string seq = std::to_string(1000 + i);
    s += R"({"seq":)" + seq + R"(,"tool":"read_file","summary":"path=src/module_)" + seq +
         R"(.cpp lines 1-200","exact":")" + loopguard::to_hex(0x9e3779b97f4a7c15ULL * (i + 1)) +
         R"(","structural":")" + loopguard::to_hex(0xc2b2ae3d27d4eb4fULL * (i + 7)) +
         R"(","ok":true,"result":")" + loopguard::to_hex(0x165667b19e3779f9ULL * (i + 3)) +
         R"(","t":)" + std::to_string(1700000000 + i) + ".25}";
  }
  return s + "]}";
}

}  // namespace

int main() {
  const std::string text = frame(64);
  std::size_t events = 0;
  for (int round = 0; round < 2000; ++round) {
#ifdef LOOPGUARD_PARSE_OUT_PARAM
    loopguard::protocol::message m;
    if (loopguard::protocol::parse(text, m)) return 1;
#else
    auto r = loopguard::protocol::parse(text);
    if (!r.has_value()) return 1;
    const auto& m = *r;
#endif
    events += std::get<loopguard::protocol::events>(m).items.size();
  }
  std::printf("%zu events parsed\n", events);
  return events == 2000u * 64u ? 0 : 1;
}
