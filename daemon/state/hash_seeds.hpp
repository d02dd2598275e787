// The random seeds that keep clients from choosing fingerprint values that collide in the
// daemon's hash tables (fingerprint_table.hpp, state_rows.hpp; docs/operations.md, "Hostile
// input"). Out of line, so that the headers most daemon sources include do not pull in
// <random>.
#pragma once

#include <cstdint>

namespace loopguard::daemon {

// Drawn from std::random_device once per process, then the same for its whole life.
std::uint64_t process_random_base();

// Two words derived from the process's base: a 64-bit key and an odd multiplier.
struct hash_seed {
  std::uint64_t xor_key = 0;
  std::uint64_t multiplier = 1;  // odd
};

// A fresh seed for each call (a counter through splitmix64, no system call).
hash_seed next_hash_seed();

}  // namespace loopguard::daemon
