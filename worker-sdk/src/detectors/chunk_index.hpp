// The content rule's index of a text's chunks, sampled by winnowing (docs/detectors.md,
// "[content]").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace loopguard::sdk {

// Finds, for every `chunk`-byte window of a growing text in order, its `occurrences` newest
// occurrences when they lie at most `max_distance` bytes apart on average: exactly the windows
// and positions an index of every window at every offset would give (gemini-cli's algorithm).
//
// Only a sample of positions is indexed (winnowing, Schleimer et al. 2003). Each window holds
// w = chunk - q + 1 grams of q = min(chunk / 2 + 1, 32) bytes; its fingerprint is the gram with
// the smallest hash (buzhash), the rightmost on a tie. Equal windows have equal grams, so every
// occurrence of a window has its fingerprint at the same offset: a window can only repeat where
// its fingerprint did, as often and as close. A fingerprint seen fewer than `occurrences` times,
// or too far apart, rules its windows out; the others are compared byte by byte with the earlier
// windows the fingerprint's entries point at. Adjacent windows mostly share their fingerprint,
// so about 2 / (w + 1) of the positions are indexed (8% for chunks of 50 bytes). `chunk` >= 1
// (the configuration allows 4 to 1000).
class chunk_index {
 public:
  chunk_index(std::size_t chunk, std::size_t occurrences, std::uint32_t max_distance);

  // Forgets every position, in O(1) (positions start again at 0).
  void clear();

  // Indexes the windows of `text` from `indexed()` on, stopping after the first one that has
  // `occurrences` occurrences close enough; returns their positions, newest first (the window's
  // own first), valid until the next call or clear(). Empty when every whole window was indexed
  // without one. `text` is the same text as at the previous calls, possibly longer; it must stay
  // under UINT32_MAX bytes.
  std::span<const std::uint32_t> advance(std::string_view text);

  std::size_t indexed() const { return indexed_; }

 private:
  struct entry {  // one sampled position
    std::uint32_t key;
    std::uint32_t pos;    // where the gram starts
    std::uint32_t prev;   // the entry of the same key before it, or kNone
    std::uint32_t count;  // entries of this key up to this one
    bool candidate;       // `occurrences` of them close enough: its windows are compared
  };
  struct slot {  // the newest entry of a key; empty unless generation == generation_
    std::uint32_t key;
    std::uint32_t last;
    std::uint32_t generation;
  };
  static constexpr std::uint32_t kNone = UINT32_MAX;

  bool add_entry(std::uint32_t key, std::uint32_t pos);  // whether it is a candidate
  slot& slot_of(std::uint32_t key);
  void grow();
  bool occurrences_of(std::string_view text, std::size_t pos);

  std::size_t chunk_, gram_, window_, occurrences_;
  std::uint32_t max_distance_;
  std::size_t indexed_ = 0;    // windows indexed
  std::size_t grams_ = 0;      // grams hashed
  std::uint64_t rolling_ = 0;  // hash of the gram at grams_ - 1
  // The last grams' keys and positions packed into one number (chunk_index.cpp, pack), in a
  // ring buffer, and the smallest of the current window: the window's fingerprint.
  std::vector<std::uint64_t> ring_;
  std::uint64_t smallest_ = UINT64_MAX;
  std::uint32_t fingerprint_ = kNone;  // the last window's, the newest entry's position
  bool candidate_ = false;             // the newest entry's
  std::vector<entry> entries_;
  std::vector<slot> table_;  // open addressing, allocated at the first use
  unsigned shift_ = 64;      // a key's first slot: its top log2(table size) bits, mixed
  std::uint32_t generation_ = 1;
  std::vector<std::uint32_t> where_;
};

}  // namespace loopguard::sdk
