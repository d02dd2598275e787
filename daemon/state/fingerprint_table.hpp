// A swarm's fingerprints: a hash table whose entries never move. The entries live in chunks of
// fixed size (a freed slot is reused); an index of our own maps each key to its slot. The index
// is open addressing with linear probing over a power-of-two array of 16-byte buckets (the
// key's 64-bit word, its tag and the slot), at most 80% full, so a lookup reads one bucket line
// (rarely two), then the entry. prefetch() asks the CPU for the line a lookup of a key starts
// at without reading the table, so a batch can fetch the index ahead of its lookups
// (docs/performance.md, "CPU per event"). An erase shifts the following buckets of its run back
// (no tombstones).
//
// Keys come from remote clients, so the bucket a key lands in must not be predictable from the
// key: a client could otherwise send keys that all share one run of the index and make every
// lookup walk it. Each table mixes the key with its own random seed (a random 64-bit xor and a
// random odd 64-bit multiplier, the 128-bit product's halves folded), so which keys share a run
// is unknown outside the process. A seed per table, not per process: a table filled in another
// table's bucket order (a snapshot restored, say) would otherwise pile its keys into long runs.
// The iteration order (bucket order) therefore differs between tables and runs: no user may
// depend on it (digests, snapshots and evictions sort or select by key).
//
// Memory: 16 bytes a bucket, 20-40 bytes of index per entry between two powers of two (boost's
// flat map, used before, took 24 bytes a slot plus metadata at a load of up to 87.5%).
//
// References to entries stay valid until their own erase, as with std::unordered_map;
// iterators until the next insertion or erase.
//
// Two forms (a Small type given): an entry is held either as a Value or as a Small, in chunks of
// its own kind, and the index says which (the slot's top bit). The owner decides when an entry
// takes the small form (shrink()); anything that needs the full form gets it by full(), which
// converts (Value(Small&&), Small(Value&&)). The reads that take either form are visit() and
// for_each(), with a function that accepts both. Iterators, find() and at() are for tables of
// one form.
//
// A Key is an unsigned integer, or a struct with a 64-bit `value` and a one-byte enum `kind`
// (fingerprint_key).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "state/hash_seeds.hpp"

namespace loopguard::daemon {

namespace fingerprint_index {

// A key as the index holds it: a 64-bit word and a tag (1 + its kind; 0 marks an empty bucket).
template <class Key>
std::uint64_t word_of(const Key& k) {
  if constexpr (std::is_integral_v<Key>) {
    return static_cast<std::uint64_t>(k);
  } else {
    return k.value;
  }
}
template <class Key>
std::uint32_t tag_of(const Key& k) {
  if constexpr (std::is_integral_v<Key>) {
    return 1;
  } else {
    static_assert(sizeof(k.kind) == 1, "a key's kind is one byte");
    return 1u + static_cast<std::uint32_t>(k.kind);
  }
}

struct alignas(16) bucket {
  std::uint64_t word = 0;
  std::uint32_t slot = 0;
  std::uint32_t tag = 0;  // 0: empty
};

inline const bucket* no_buckets() {
  static const bucket empty[1]{};
  return empty;
}

}  // namespace fingerprint_index

// Entries that never move: chunks of 1024, a freed slot reused.
template <class T>
class entry_pool {
 public:
  static constexpr std::uint32_t kChunkBits = 10;  // 1024 entries per chunk
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;

  T& at(std::uint32_t i) {
    return *std::launder(reinterpret_cast<T*>(&chunks_[i >> kChunkBits][i & (kChunk - 1)]));
  }
  const T& at(std::uint32_t i) const {
    return *std::launder(reinterpret_cast<const T*>(&chunks_[i >> kChunkBits][i & (kChunk - 1)]));
  }

  template <class... Args>
  std::uint32_t construct(Args&&... args) {
    const bool reuse = !free_.empty();
    const std::uint32_t i = reuse ? free_.back() : used_;
    if (!reuse && (i >> kChunkBits) == chunks_.size()) {
      // Slots stay below 2^31: the index marks the small form with the top bit.
      if (i >= (1u << 31) - kChunk) throw std::length_error("fingerprint_table: too many entries");
      chunks_.push_back(std::make_unique_for_overwrite<raw[]>(kChunk));
    }
    new (&chunks_[i >> kChunkBits][i & (kChunk - 1)]) T(std::forward<Args>(args)...);
    if (reuse) {
      free_.pop_back();
    } else {
      ++used_;
    }
    return i;
  }

  void destroy(std::uint32_t i) {
    at(i).~T();
    free_.push_back(i);
  }

  void reserve(std::size_t n) { chunks_.reserve((n + kChunk - 1) / kChunk); }
  // Forgets every slot; the caller destroyed the entries.
  void clear() {
    chunks_.clear();
    free_.clear();
    used_ = 0;
  }

 private:
  struct alignas(T) raw {
    std::byte bytes[sizeof(T)];
  };
  std::vector<std::unique_ptr<raw[]>> chunks_;
  std::vector<std::uint32_t> free_;  // slots below used_ that hold no entry
  std::uint32_t used_ = 0;           // slots ever constructed, in order
};

template <class Key, class Value, class Small = void>
class fingerprint_table {
 public:
  using value_type = std::pair<const Key, Value>;
  using small_type = std::pair<const Key, std::conditional_t<std::is_void_v<Small>, char, Small>>;
  static constexpr bool two_forms = !std::is_void_v<Small>;

 private:
  using bucket = fingerprint_index::bucket;
  static constexpr std::uint32_t kSmall = 1u << 31;  // a slot of the small form
  static constexpr std::size_t kMinBuckets = 16;
  static constexpr std::size_t npos = ~std::size_t{0};

  // The most entries `n` buckets hold: 80% of them.
  static constexpr std::size_t max_load_of(std::size_t n) {
    return n < kMinBuckets ? 0 : n / 5 * 4;
  }

  template <class Table, class V>
  class basic_iterator {
   public:
    basic_iterator() = default;
    basic_iterator(Table* t, std::size_t i) : table_(t), i_(i) {}
    V& operator*() const { return table_->big_.at(table_->b_[i_].slot); }
    V* operator->() const { return &table_->big_.at(table_->b_[i_].slot); }
    basic_iterator& operator++() {
      i_ = table_->next_full(i_ + 1);
      return *this;
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) {
      return a.i_ == b.i_;
    }
    std::size_t index() const { return i_; }

   private:
    Table* table_ = nullptr;
    std::size_t i_ = 0;
  };

 public:
  using iterator = basic_iterator<fingerprint_table, value_type>;
  using const_iterator = basic_iterator<const fingerprint_table, const value_type>;

  fingerprint_table() = default;
  // A table with the given seeds instead of its own random ones: a layout known in advance, for
  // tests only (a daemon's tables must keep theirs secret).
  explicit fingerprint_table(hash_seed s) : seeds_(s) {}
  fingerprint_table(const fingerprint_table&) = delete;
  fingerprint_table& operator=(const fingerprint_table&) = delete;
  fingerprint_table(fingerprint_table&& o) noexcept { swap(o); }
  fingerprint_table& operator=(fingerprint_table&& o) noexcept {
    fingerprint_table t(std::move(o));
    swap(t);
    return *this;
  }
  ~fingerprint_table() { clear(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Tables of one form.
  iterator begin() requires(!two_forms) { return {this, next_full(0)}; }
  iterator end() requires(!two_forms) { return {this, buckets()}; }
  const_iterator begin() const requires(!two_forms) { return {this, next_full(0)}; }
  const_iterator end() const requires(!two_forms) { return {this, buckets()}; }

  iterator find(const Key& k) requires(!two_forms) { return {this, find_or_end(k)}; }
  const_iterator find(const Key& k) const requires(!two_forms) { return {this, find_or_end(k)}; }
  Value& at(const Key& k) requires(!two_forms) { return big_.at(b_[bucket_at(k)].slot).second; }
  const Value& at(const Key& k) const requires(!two_forms) {
    return big_.at(b_[bucket_at(k)].slot).second;
  }

  // The entry of `k`, made from `args` (value-initialized without) when new; true when it was
  // created.
  template <class... Args>
  std::pair<iterator, bool> try_emplace(const Key& k, Args&&... args) requires(!two_forms) {
    const auto [i, found] = insert_point(k);
    if (found) return {{this, i}, false};
    place(i, k,
          big_.construct(std::piecewise_construct, std::forward_as_tuple(k),
                         std::forward_as_tuple(std::forward<Args>(args)...)));
    return {{this, i}, true};
  }
  Value& operator[](const Key& k) requires(!two_forms) { return try_emplace(k).first->second; }

  // Erases the entry at `pos`; the entries after it in its run move back one bucket each, so
  // every iterator is invalid after it (references to other entries stay valid).
  void erase(iterator pos) requires(!two_forms) { erase_bucket(pos.index()); }

  // Either form: f(const Key&, Value&) or f(const Key&, Small&) for each entry, in the index's
  // order (which depends on the seed).
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = next_full(0); i < buckets(); i = next_full(i + 1)) apply(i, f);
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = next_full(0); i < buckets(); i = next_full(i + 1)) apply(i, f);
  }
  // f(const Key&, Value&) or f(const Key&, Small&) for the entry of `k`; false: none.
  template <class F>
  bool visit(const Key& k, F&& f) {
    const std::size_t i = find_bucket(k);
    if (i != npos) apply(i, f);
    return i != npos;
  }
  template <class F>
  bool visit(const Key& k, F&& f) const {
    const std::size_t i = find_bucket(k);
    if (i != npos) apply(i, f);
    return i != npos;
  }
  bool contains(const Key& k) const { return find_bucket(k) != npos; }

  // The entry of `k` in its full form, or nullptr: absent, or held in the small form (which only
  // full() converts).
  Value* find_full(const Key& k) {
    const std::size_t i = find_bucket(k);
    return i == npos || (b_[i].slot & kSmall) ? nullptr : &big_.at(b_[i].slot).second;
  }
  const Value* find_full(const Key& k) const {
    const std::size_t i = find_bucket(k);
    return i == npos || (b_[i].slot & kSmall) ? nullptr : &big_.at(b_[i].slot).second;
  }

  // Two forms: the entry of `k` in its full form, converted from the small form or created
  // (value-initialized) when absent; true when it was created.
  std::pair<Value*, bool> full(const Key& k) requires two_forms {
    const auto [i, found] = insert_point(k);
    if (!found) {
      place(i, k,
            big_.construct(std::piecewise_construct, std::forward_as_tuple(k),
                           std::forward_as_tuple()));
      return {&big_.at(b_[i].slot).second, true};
    }
    if (b_[i].slot & kSmall) {
      const std::uint32_t from = b_[i].slot & ~kSmall;
      b_[i].slot = big_.construct(std::piecewise_construct, std::forward_as_tuple(k),
                                  std::forward_as_tuple(std::move(small_.at(from).second)));
      small_.destroy(from);
    }
    return {&big_.at(b_[i].slot).second, false};
  }
  // Two forms: converts the entry of `k` (present, full) to the small form. References to it
  // are invalid after.
  void shrink(const Key& k) requires two_forms {
    bucket& b = b_[bucket_at(k)];
    if (b.slot & kSmall) throw std::logic_error("fingerprint_table::shrink: already small");
    const std::uint32_t from = b.slot;
    b.slot = kSmall | small_.construct(std::piecewise_construct, std::forward_as_tuple(k),
                                       std::forward_as_tuple(std::move(big_.at(from).second)));
    big_.destroy(from);
  }
  // Two forms: a new entry of `k` made from `args`, in the full or the small form (a restore);
  // nullptr when `k` was present (nothing changed, `args` untouched).
  template <class... Args>
  Value* emplace_full(const Key& k, Args&&... args) requires two_forms {
    const auto [i, found] = insert_point(k);
    if (found) return nullptr;
    const std::uint32_t slot = big_.construct(std::piecewise_construct, std::forward_as_tuple(k),
                                              std::forward_as_tuple(std::forward<Args>(args)...));
    place(i, k, slot);
    return &big_.at(slot).second;
  }
  template <class... Args>
  Small* emplace_small(const Key& k, Args&&... args) requires two_forms {
    const auto [i, found] = insert_point(k);
    if (found) return nullptr;
    const std::uint32_t slot = small_.construct(std::piecewise_construct, std::forward_as_tuple(k),
                                                std::forward_as_tuple(std::forward<Args>(args)...));
    place(i, k, kSmall | slot);
    return &small_.at(slot).second;
  }
  // f(const Key&, Value&) or f(const Key&, Small&) for the entry of `k`, then erases it, in one
  // lookup; false: none. References to other entries stay valid.
  template <class F>
  bool take(const Key& k, F&& f) {
    const std::size_t i = find_bucket(k);
    if (i == npos) return false;
    apply(i, f);
    erase_bucket(i);
    return true;
  }
  // Erases the entry of `k` (false: none). References to other entries stay valid.
  bool erase(const Key& k) {
    const std::size_t i = find_bucket(k);
    if (i != npos) erase_bucket(i);
    return i != npos;
  }

  // The bytes of the entry of `k` (empty: none), for a hint to the CPU's cache: valid until
  // the entry is erased or converted.
  std::pair<const void*, std::size_t> address(const Key& k) const {
    const std::size_t i = find_bucket(k);
    if (i == npos) return {nullptr, 0};
    if (b_[i].slot & kSmall) return {&small_.at(b_[i].slot & ~kSmall), sizeof(small_type)};
    return {&big_.at(b_[i].slot), sizeof(value_type)};
  }

  // Asks the CPU to fetch the index bucket a lookup of `k` starts at (a hint: reads nothing of
  // the table but its bucket array's address). GCC counts a prefetch as no effect at all and
  // may drop the call of a function that only prefetches; the empty asm is an effect it keeps.
  void prefetch(const Key& k) const {
    const bucket* p = &b_[home(fingerprint_index::word_of(k), fingerprint_index::tag_of(k))];
    __builtin_prefetch(p);
    asm volatile("" : : "r"(p));
  }

  // Room for `n` entries without growing the index or allocating chunks one by one.
  void reserve(std::size_t n) {
    std::size_t want = kMinBuckets;
    while (max_load_of(want) < n) want *= 2;
    if (want > buckets()) grow(want);
    big_.reserve(n);
  }

  // How many entries fit before the index grows.
  std::size_t capacity() const { return max_load_; }

  // The most full buckets in a row (a lookup reads at most that many): a check for tests that
  // keys spread over the index.
  std::size_t longest_run() const {
    std::size_t most = 0, run = 0, first = 0;
    for (std::size_t i = 0; i < buckets(); ++i) {
      run = b_[i].tag != 0 ? run + 1 : 0;
      if (run == i + 1) first = run;  // the run at the start continues the one at the end
      most = std::max(most, run);
    }
    return run == buckets() ? run : std::max(most, run + first);
  }

  // Erases every entry; the index keeps its buckets (as a std::unordered_map would).
  void clear() {
    if (size_ > 0) {
      for (std::size_t i = 0; i < buckets(); ++i) {
        if (b_[i].tag == 0) continue;
        if (b_[i].slot & kSmall) {
          small_.at(b_[i].slot & ~kSmall).~small_type();
        } else {
          big_.at(b_[i].slot).~value_type();
        }
        b_[i] = bucket{};
      }
    }
    size_ = 0;
    big_.clear();
    small_.clear();
  }

 private:
  std::size_t buckets() const { return mask_ + 1; }

  // The bucket a lookup of the key (word, tag) starts at: the word mixed with this table's seed
  // (hash_seeds.hpp), the tag mixed in by a fixed odd constant.
  std::size_t home(std::uint64_t w, std::uint32_t tag) const {
    const std::uint64_t x = mix(seeds_, w) ^ (tag * 0x9E3779B97F4A7C15ull);
    return static_cast<std::size_t>(x) & mask_;
  }

  // The bucket holding `k`, or npos.
  std::size_t find_bucket(const Key& k) const {
    const std::uint64_t w = fingerprint_index::word_of(k);
    const std::uint32_t tag = fingerprint_index::tag_of(k);
    for (std::size_t i = home(w, tag);; i = (i + 1) & mask_) {
      const bucket& b = b_[i];
      if (b.word == w && b.tag == tag) return i;
      if (b.tag == 0) return npos;
    }
  }
  std::size_t bucket_at(const Key& k) const {
    const std::size_t i = find_bucket(k);
    if (i == npos) throw std::out_of_range("fingerprint_table: no such key");
    return i;
  }
  std::size_t find_or_end(const Key& k) const {
    const std::size_t i = find_bucket(k);
    return i == npos ? buckets() : i;
  }
  // The bucket of `k` (true) or the empty bucket a new entry of `k` goes to (false), the index
  // grown first when it is full.
  std::pair<std::size_t, bool> insert_point(const Key& k) {
    const std::uint64_t w = fingerprint_index::word_of(k);
    const std::uint32_t tag = fingerprint_index::tag_of(k);
    std::size_t i = home(w, tag);
    for (;; i = (i + 1) & mask_) {
      if (b_[i].tag == 0) break;
      if (b_[i].word == w && b_[i].tag == tag) return {i, true};
    }
    if (size_ + 1 > max_load_) {
      grow(std::max(kMinBuckets, 2 * buckets()));
      i = free_bucket(w, tag);
    }
    return {i, false};
  }
  void place(std::size_t i, const Key& k, std::uint32_t slot) {
    b_[i] = bucket{fingerprint_index::word_of(k), slot, fingerprint_index::tag_of(k)};
    ++size_;
  }
  // The first empty bucket of the key's run (the key is not in the table).
  std::size_t free_bucket(std::uint64_t w, std::uint32_t tag) const {
    std::size_t i = home(w, tag);
    while (b_[i].tag != 0) i = (i + 1) & mask_;
    return i;
  }
  // The first full bucket at or after `i` (the end: buckets()).
  std::size_t next_full(std::size_t i) const {
    while (i < buckets() && b_[i].tag == 0) ++i;
    return i;
  }

  template <class F>
  void apply(std::size_t i, F& f) {
    if constexpr (two_forms) {
      if (b_[i].slot & kSmall) {
        auto& e = small_.at(b_[i].slot & ~kSmall);
        f(e.first, e.second);
        return;
      }
    }
    auto& e = big_.at(b_[i].slot);
    f(e.first, e.second);
  }
  template <class F>
  void apply(std::size_t i, F& f) const {
    if constexpr (two_forms) {
      if (b_[i].slot & kSmall) {
        const auto& e = small_.at(b_[i].slot & ~kSmall);
        f(e.first, e.second);
        return;
      }
    }
    const auto& e = big_.at(b_[i].slot);
    f(e.first, e.second);
  }

  // Erases the entry in bucket `hole`; the entries after it in its run move back one bucket
  // each (no tombstones).
  void erase_bucket(std::size_t hole) {
    if (b_[hole].slot & kSmall) {
      small_.destroy(b_[hole].slot & ~kSmall);
    } else {
      big_.destroy(b_[hole].slot);
    }
    --size_;
    for (std::size_t j = (hole + 1) & mask_; b_[j].tag != 0; j = (j + 1) & mask_) {
      const std::size_t h = home(b_[j].word, b_[j].tag);
      // The bucket at j may move back to the hole unless its home lies after the hole (in the
      // run's cyclic order), i.e. closer to j than the hole is.
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        b_[hole] = b_[j];
        hole = j;
      }
    }
    b_[hole] = bucket{};
  }

  // Moves the index to `n` buckets (a power of two, above the entries held).
  void grow(std::size_t n) {
    auto next = std::make_unique<bucket[]>(n);
    const bucket* old = b_;
    const std::size_t old_n = buckets();
    b_ = next.get();
    mask_ = n - 1;
    max_load_ = max_load_of(n);
    for (std::size_t i = 0; i < old_n; ++i) {
      if (old[i].tag != 0) b_[free_bucket(old[i].word, old[i].tag)] = old[i];
    }
    storage_ = std::move(next);
  }

  void swap(fingerprint_table& o) noexcept {
    std::swap(seeds_, o.seeds_);
    storage_.swap(o.storage_);
    std::swap(b_, o.b_);
    std::swap(mask_, o.mask_);
    std::swap(max_load_, o.max_load_);
    std::swap(size_, o.size_);
    std::swap(big_, o.big_);
    std::swap(small_, o.small_);
  }

  hash_seed seeds_ = next_hash_seed();  // each table its own (hash_seeds.hpp)
  std::unique_ptr<bucket[]> storage_;
  // The buckets: storage_, or one shared empty bucket (never written: an insertion grows first).
  bucket* b_ = const_cast<bucket*>(fingerprint_index::no_buckets());
  std::size_t mask_ = 0;      // buckets - 1
  std::size_t max_load_ = 0;  // max_load_of(buckets)
  std::size_t size_ = 0;
  entry_pool<value_type> big_;
  entry_pool<small_type> small_;  // unused with one form
};

}  // namespace loopguard::daemon
