// Helpers shared by the libFuzzer harnesses (docs/fuzzing.md): a contract check that aborts with
// a message, and the per-harness counters printed at exit so a run over the seed corpus proves
// that the deep paths were reached.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/utf8.hpp"

// A broken contract: say which on stderr and abort, which libFuzzer reports as a crash (and
// saves the input). Never compiled out.
#define LG_FUZZ_CHECK(cond, what)                                          \
  do {                                                                     \
    if (!(cond)) ::loopguard::fuzz::fail(what, #cond, __FILE__, __LINE__); \
  } while (0)

namespace loopguard::fuzz {

[[noreturn]] inline void fail(std::string_view what, const char* cond, const char* file, int line) {
  std::fprintf(stderr, "fuzz contract broken: %.*s [%s] at %s:%d\n", static_cast<int>(what.size()),
               what.data(), cond, file, line);
  std::abort();
}

// Counters of one harness, printed to stderr at exit in one line:
//   fuzz-counters NAME: inputs=812 decoded=300 ...
// scripts/fuzz.sh requires every counter to be non-zero after a run over the seed corpus.
template <std::size_t N>
class counters {
 public:
  counters(std::string_view harness, std::array<std::string_view, N> names)
      : harness_(harness), names_(names) {}
  counters(const counters&) = delete;
  counters& operator=(const counters&) = delete;
  ~counters() {
    std::string line = "fuzz-counters " + std::string(harness_) + ":";
    for (std::size_t i = 0; i < N; ++i) {
      line += " " + std::string(names_[i]) + "=" + std::to_string(values_[i]);
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  void add(std::size_t i, std::uint64_t n = 1) { values_[i] += n; }

 private:
  std::string_view harness_;
  std::array<std::string_view, N> names_;
  std::array<std::uint64_t, N> values_{};
};

inline std::string_view as_view(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};  // NOLINT: bytes as chars
}

inline bool valid_utf8(std::string_view s) {
  return utf8::is_valid(s);
}

// True when `body` is one JSON document (nlohmann, no exceptions).
inline bool parses_as_json(std::string_view body) {
  return !nlohmann::json::parse(body, nullptr, false).is_discarded();
}

// Reads the input as a stream of small pieces: a byte, or a string whose length is the next
// byte modulo `max_len + 1`. Running out of input gives zeros and empty strings, so every
// input decodes to something.
class byte_stream {
 public:
  explicit byte_stream(std::string_view bytes) : bytes_(bytes) {}
  bool empty() const { return pos_ >= bytes_.size(); }
  std::uint8_t byte() {
    return empty() ? std::uint8_t{0} : static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  std::string str(std::size_t max_len) {
    const std::size_t want = byte() % (max_len + 1);
    const std::size_t n = std::min(want, bytes_.size() - std::min(pos_, bytes_.size()));
    std::string out(bytes_.substr(std::min(pos_, bytes_.size()), n));
    pos_ += n;
    return out;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace loopguard::fuzz
