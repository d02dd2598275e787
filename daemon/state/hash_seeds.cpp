#include "state/hash_seeds.hpp"

#include <atomic>
#include <random>

namespace loopguard::daemon {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Drawn from std::random_device once per process, then the same for its whole life.
std::uint64_t process_random_base() {
  static const std::uint64_t base = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return base;
}

}  // namespace

hash_seed next_hash_seed() {
  static std::atomic<std::uint64_t> counter{0};
  const std::uint64_t n = counter.fetch_add(2, std::memory_order_relaxed);
  const std::uint64_t base = process_random_base();
  return {splitmix64(base + n), splitmix64(base + n + 1) | 1};
}

}  // namespace loopguard::daemon
