// Little-endian fixed-width encoding shared by the checkpoint rows and the event log
// (docs/storage.md). Pure; a reader never reads past its end and reports a short input.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

namespace loopguard::daemon {

static_assert(std::endian::native == std::endian::little,
              "the checkpoint format is little-endian; add byte swaps for this host");

class byte_writer {
 public:
  explicit byte_writer(std::string& out) : out_(out) {}
  template <class T>
  void put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.append(b, sizeof(T));
  }
  // A string of at most 65535 bytes, as u16 length then bytes (callers bound their strings).
  void str(std::string_view s) {
    put(static_cast<std::uint16_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  // LEB128: seven bits a byte, least significant first, the top bit set on every byte but the
  // last (1 byte below 128, at most 10).
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(static_cast<std::uint8_t>(v) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  // A string as varint length then bytes.
  void varstr(std::string_view s) {
    varint(s.size());
    out_.append(s.data(), s.size());
  }

 private:
  std::string& out_;
};

class byte_reader {
 public:
  explicit byte_reader(std::string_view in) : in_(in) {}
  // False (and v untouched) when fewer than sizeof(T) bytes are left.
  template <class T>
  bool get(T& v) {
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(&v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  bool str(std::string_view& s) {
    std::uint16_t n = 0;
    if (!get(n) || in_.size() < n) return false;
    s = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  // False when the input ends inside it, it runs past 10 bytes, or its value passes `max`.
  bool varint(std::uint64_t& v, std::uint64_t max = ~std::uint64_t{0}) {
    std::uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) return false;
      const auto b = static_cast<std::uint8_t>(in_.front());
      in_.remove_prefix(1);
      if (shift == 63 && b > 1) return false;  // past 64 bits
      x |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (x > max) return false;
        v = x;
        return true;
      }
    }
    return false;
  }
  template <class T>
  bool varint_as(T& v) {
    std::uint64_t x = 0;
    if (!varint(x, std::numeric_limits<T>::max())) return false;
    v = static_cast<T>(x);
    return true;
  }
  bool varstr(std::string_view& s) {
    std::uint64_t n = 0;
    // The bytes left after the length, not before it.
    if (!varint(n) || n > in_.size()) return false;
    s = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  std::size_t left() const { return in_.size(); }
  // `n` records of `record_bytes` each; false when they are not all there.
  bool take(std::size_t n, std::size_t record_bytes, std::string_view& out) {
    if (record_bytes != 0 && n > in_.size() / record_bytes) return false;
    out = in_.substr(0, n * record_bytes);
    in_.remove_prefix(n * record_bytes);
    return true;
  }
  bool at_end() const { return in_.empty(); }

 private:
  std::string_view in_;
};

}  // namespace loopguard::daemon
