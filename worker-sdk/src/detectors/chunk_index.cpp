#include "chunk_index.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace loopguard::sdk {
namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
constexpr std::size_t kFirstSlots = 256;
constexpr std::size_t kLongestGram = 32;  // longer ones would fold onto themselves in 64 bits

// A random 64-bit value per byte value (splitmix64), for the cyclic-polynomial hash.
constexpr std::array<std::uint64_t, 256> byte_values() {
  std::array<std::uint64_t, 256> t{};
  std::uint64_t x = 0;
  for (std::uint64_t& v : t) {
    x += kGolden;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    v = z ^ (z >> 31);
  }
  return t;
}
constexpr std::array<std::uint64_t, 256> kByteValues = byte_values();

// A gram as one number: 32 bits of its key above its position counted down, so the smallest
// number is the smallest key and, among equal keys, the rightmost gram.
std::uint64_t pack(std::uint64_t key, std::size_t gram) {
  return (key & 0xFFFFFFFF00000000ULL) | (UINT32_MAX - static_cast<std::uint32_t>(gram));
}
std::uint32_t gram_at(std::uint64_t packed) {
  return UINT32_MAX - static_cast<std::uint32_t>(packed);
}
std::uint32_t key_of(std::uint64_t packed) {
  return static_cast<std::uint32_t>(packed >> 32);
}

// (newest - oldest) / (occurrences - 1) > max_distance, computed as the content rule does.
bool too_far(std::size_t newest, std::size_t oldest, std::size_t occurrences,
             std::uint32_t max_distance) {
  const double avg = static_cast<double>(newest - oldest) / static_cast<double>(occurrences - 1);
  return avg > static_cast<double>(max_distance);
}

}  // namespace

chunk_index::chunk_index(std::size_t chunk, std::size_t occurrences, std::uint32_t max_distance)
    : chunk_(chunk),
      gram_(std::min(chunk / 2 + 1, kLongestGram)),
      window_(chunk - gram_ + 1),
      occurrences_(occurrences),
      max_distance_(max_distance) {}

void chunk_index::clear() {
  indexed_ = 0;
  grams_ = 0;
  smallest_ = UINT64_MAX;
  fingerprint_ = kNone;
  candidate_ = false;
  entries_.clear();
  if (++generation_ == 0) {  // wrapped: really empty the table once every 2^32 clears
    for (slot& s : table_) s.generation = 0;
    generation_ = 1;
  }
}

std::span<const std::uint32_t> chunk_index::advance(std::string_view text) {
  if (table_.empty()) {
    ring_.resize(std::bit_ceil(window_));
    table_.assign(kFirstSlots, slot{0, 0, 0});
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(kFirstSlots));
  }
  // Everything in locals: the ring's stores could alias members, which would then be reloaded.
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size(), chunk = chunk_, window = window_, gram = gram_;
  const int turn = static_cast<int>(gram % 64);
  const std::size_t mask = ring_.size() - 1;
  std::uint64_t* ring = ring_.data();
  std::uint64_t rolling = rolling_, smallest = smallest_;
  std::size_t grams = grams_, pos = indexed_;
  if (grams == 0 && pos + chunk <= size) {
    rolling = 0;
    for (std::size_t i = 0; i < gram; ++i) rolling = std::rotl(rolling, 1) ^ kByteValues[bytes[i]];
    smallest = ring[0] = pack(rolling, 0);
    grams = 1;
  }
  std::span<const std::uint32_t> found;
  for (; pos + chunk <= size; ++pos) {
    for (; grams < pos + window; ++grams) {  // one gram per window after the first window
      // Buzhash: each byte's value rotated by its distance from the gram's end, all XORed.
      rolling = std::rotl(rolling, 1) ^ std::rotl(kByteValues[bytes[grams - 1]], turn) ^
                kByteValues[bytes[grams + gram - 1]];
      const std::uint64_t packed = pack(rolling, grams);
      ring[grams & mask] = packed;
      smallest = std::min(smallest, packed);
    }
    if (gram_at(smallest) < pos) {  // the minimum left the window: find the new one
      smallest = UINT64_MAX;
      for (std::size_t g = pos; g < pos + window; ++g)
        smallest = std::min(smallest, ring[g & mask]);
    }
    // The window's fingerprint; fingerprints only move right as the window does.
    if (gram_at(smallest) != fingerprint_) {
      fingerprint_ = gram_at(smallest);
      candidate_ = add_entry(key_of(smallest), fingerprint_);
    }
    if (candidate_ && occurrences_of(text, pos)) {
      found = where_;
      ++pos;
      break;
    }
  }
  rolling_ = rolling;
  smallest_ = smallest;
  grams_ = grams;
  indexed_ = pos;
  return found;
}

chunk_index::slot& chunk_index::slot_of(std::uint32_t key) {
  const std::size_t mask = table_.size() - 1;
  for (auto i = static_cast<std::size_t>((key * kGolden) >> shift_);; i = (i + 1) & mask) {
    slot& s = table_[i];
    if (s.generation != generation_ || s.key == key) return s;
  }
}

// Twice the slots, each key pointing at its newest entry again.
void chunk_index::grow() {
  table_.assign(2 * table_.size(), slot{0, 0, 0});
  --shift_;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    slot& s = slot_of(entries_[e].key);
    s = slot{entries_[e].key, static_cast<std::uint32_t>(e), generation_};
  }
}

bool chunk_index::add_entry(std::uint32_t key, std::uint32_t pos) {
  if (2 * (entries_.size() + 1) > table_.size()) grow();  // at most half full
  const auto self = static_cast<std::uint32_t>(entries_.size());
  entry e{key, pos, kNone, 1, false};
  slot& s = slot_of(key);
  if (s.generation == generation_) {
    e.prev = s.last;
    e.count = entries_[s.last].count + 1;
  }
  s = slot{key, self, generation_};
  if (e.count >= occurrences_) {
    // The windows this fingerprint covers repeat at most where it did: `occurrences` of its
    // entries, the oldest of them no nearer than this one.
    std::uint32_t oldest = self;
    for (std::size_t j = 1; j < occurrences_; ++j) {
      oldest = j == 1 ? e.prev : entries_[oldest].prev;
    }
    e.candidate =
        !too_far(pos, oldest == self ? pos : entries_[oldest].pos, occurrences_, max_distance_);
  }
  entries_.push_back(e);
  return e.candidate;
}

// Whether the window at `pos` has `occurrences` occurrences close enough, in where_. Each one
// has its fingerprint at the same offset as this window's, an entry of the same key; the entries
// are walked newest first, and each is checked byte by byte.
bool chunk_index::occurrences_of(std::string_view text, std::size_t pos) {
  const std::size_t offset = entries_.back().pos - pos;
  const char* window = text.data() + pos;
  where_.clear();
  for (std::uint32_t e = static_cast<std::uint32_t>(entries_.size() - 1);
       e != kNone && where_.size() < occurrences_; e = entries_[e].prev) {
    if (entries_[e].pos < offset) break;
    const std::size_t at = entries_[e].pos - offset;
    // Older ones are farther still, so none of them can be the oldest of a close enough set.
    if (too_far(pos, at, occurrences_, max_distance_)) break;
    if (at == pos || std::memcmp(text.data() + at, window, chunk_) == 0) {
      where_.push_back(static_cast<std::uint32_t>(at));
    }
  }
  return where_.size() == occurrences_;
}

}  // namespace loopguard::sdk
