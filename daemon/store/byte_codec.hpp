// Little-endian fixed-width encoding shared by the checkpoint rows and the event log
// (docs/storage.md). Pure; a reader never reads past its end and reports a short input.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
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
