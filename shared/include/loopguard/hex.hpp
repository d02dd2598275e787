// Fixed-width lowercase hex spelling of 64-bit fingerprints, as printed and sent on the wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loopguard {

// Always 16 lowercase hex digits.
std::string to_hex(std::uint64_t v);

// Parses exactly 16 hex digits (either case); nullopt otherwise.
std::optional<std::uint64_t> from_hex(std::string_view s);

}  // namespace loopguard
