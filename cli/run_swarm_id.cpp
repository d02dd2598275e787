#include "run_swarm_id.hpp"

#include <functional>
#include <random>

#include "loopguard/hex.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::cli {

std::string random_run_tag() {
  std::random_device rd;
  return to_hex((std::uint64_t{rd()} << 32) ^ rd());
}

std::string run_swarm_id(std::string_view swarm, std::string_view tag) {
  const std::string suffix = "~r" + std::string(tag);
  if (swarm.size() + suffix.size() <= protocol::kMaxNameBytes) {
    return std::string(swarm) + suffix;
  }
  const std::string hash = "~h" + to_hex(std::hash<std::string_view>{}(swarm));
  const std::size_t room = protocol::kMaxNameBytes - suffix.size() - hash.size();
  return std::string(utf8::cut(swarm, room)) + hash + suffix;
}

}  // namespace loopguard::cli
