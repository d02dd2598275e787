// The random seeds, and the mix with them, that keep clients from choosing fingerprint values
// that collide in the daemon's hash tables (fingerprint_table.hpp, state_rows.hpp;
// docs/operations.md, "Hostile input"). The seeds are drawn out of line, so that the headers
// most daemon sources include do not pull in <random>.
#pragma once

#include <cstdint>

namespace loopguard::daemon {

// Two words derived from a random base drawn once per process (std::random_device): a 64-bit
// key and an odd multiplier.
struct hash_seed {
  std::uint64_t xor_key = 0;
  std::uint64_t multiplier = 1;  // odd
};

// A fresh seed for each call (the base plus a counter, through splitmix64: no system call).
hash_seed next_hash_seed();

// A 64-bit word mixed with a seed: xor-ed with its key, times its odd multiplier, the 128-bit
// product's halves folded, so every bit of the word reaches the low bits.
inline std::uint64_t mix(const hash_seed& s, std::uint64_t word) {
  __extension__ using uint128 = unsigned __int128;
  const uint128 p = static_cast<uint128>(word ^ s.xor_key) * s.multiplier;
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}

}  // namespace loopguard::daemon
