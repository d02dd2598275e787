// A swarm's fingerprints: a hash table whose entries never move. The entries live in chunks of
// fixed size (a freed slot is reused), and a flat open-addressing index maps each key to its
// slot (boost::unordered_flat_map). Compared with std::unordered_map this saves the node's
// allocation and the chain of pointers a lookup follows: a lookup reads the index's group and
// slot, then the entry (docs/performance.md, "CPU per event"). References to entries stay valid
// until their own erase, as with std::unordered_map; iterators, like the index's, until the
// next insertion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

namespace loopguard::daemon {

template <class Key, class Value, class Hash>
class fingerprint_table {
 public:
  using value_type = std::pair<const Key, Value>;

 private:
  using index_map = boost::unordered_flat_map<Key, std::uint32_t, Hash>;
  static constexpr std::uint32_t kChunkBits = 10;  // 1024 entries per chunk
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;

  template <class Table, class IndexIt, class V>
  class basic_iterator {
   public:
    basic_iterator() = default;
    basic_iterator(Table* t, IndexIt it) : table_(t), it_(it) {}
    V& operator*() const { return table_->slot(it_->second); }
    V* operator->() const { return &table_->slot(it_->second); }
    basic_iterator& operator++() {
      ++it_;
      return *this;
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) {
      return a.it_ == b.it_;
    }
    IndexIt index() const { return it_; }

   private:
    Table* table_ = nullptr;
    IndexIt it_{};
  };

 public:
  using iterator = basic_iterator<fingerprint_table, typename index_map::iterator, value_type>;
  using const_iterator =
      basic_iterator<const fingerprint_table, typename index_map::const_iterator, const value_type>;

  fingerprint_table() = default;
  fingerprint_table(const fingerprint_table&) = delete;
  fingerprint_table& operator=(const fingerprint_table&) = delete;
  fingerprint_table(fingerprint_table&& o) noexcept { swap(o); }
  fingerprint_table& operator=(fingerprint_table&& o) noexcept {
    fingerprint_table t(std::move(o));
    swap(t);
    return *this;
  }
  ~fingerprint_table() { clear(); }

  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }

  iterator begin() { return {this, index_.begin()}; }
  iterator end() { return {this, index_.end()}; }
  const_iterator begin() const { return {this, index_.begin()}; }
  const_iterator end() const { return {this, index_.end()}; }

  iterator find(const Key& k) { return {this, index_.find(k)}; }
  const_iterator find(const Key& k) const { return {this, index_.find(k)}; }
  Value& at(const Key& k) {
    const auto it = index_.find(k);
    if (it == index_.end()) throw std::out_of_range("fingerprint_table::at");
    return slot(it->second).second;
  }
  const Value& at(const Key& k) const {
    const auto it = index_.find(k);
    if (it == index_.end()) throw std::out_of_range("fingerprint_table::at");
    return slot(it->second).second;
  }

  // Where the entry of `k` is (nullptr: none), for a hint to the CPU's cache: valid until the
  // entry is erased.
  const value_type* address(const Key& k) const {
    const auto it = index_.find(k);
    return it == index_.end() ? nullptr : &slot(it->second);
  }

  // The entry of `k`, made from `args` (value-initialized without) when new; true when it was
  // created.
  template <class... Args>
  std::pair<iterator, bool> try_emplace(const Key& k, Args&&... args) {
    const auto [it, inserted] = index_.try_emplace(k, 0u);
    if (!inserted) return {{this, it}, false};
    try {
      it->second = construct(k, std::forward<Args>(args)...);
    } catch (...) {
      index_.erase(it);
      throw;
    }
    return {{this, it}, true};
  }
  Value& operator[](const Key& k) { return try_emplace(k).first->second; }

  void erase(iterator pos) {
    const std::uint32_t i = pos.index()->second;
    index_.erase(pos.index());
    destroy(i);
  }

  // Room for `n` entries without growing the index or allocating chunks one by one.
  void reserve(std::size_t n) {
    index_.reserve(n);
    chunks_.reserve((n + kChunk - 1) / kChunk);
  }

  // How many entries fit before the index grows.
  std::size_t capacity() const { return index_.max_load(); }

  void clear() {
    for (const auto& [key, i] : index_) slot(i).~value_type();
    index_.clear();
    chunks_.clear();
    free_.clear();
    used_ = 0;
  }

 private:
  struct alignas(value_type) raw {
    std::byte bytes[sizeof(value_type)];
  };

  value_type& slot(std::uint32_t i) {
    return *std::launder(
        reinterpret_cast<value_type*>(&chunks_[i >> kChunkBits][i & (kChunk - 1)]));
  }
  const value_type& slot(std::uint32_t i) const {
    return *std::launder(
        reinterpret_cast<const value_type*>(&chunks_[i >> kChunkBits][i & (kChunk - 1)]));
  }

  template <class... Args>
  std::uint32_t construct(const Key& k, Args&&... args) {
    const bool reuse = !free_.empty();
    const std::uint32_t i = reuse ? free_.back() : used_;
    if (!reuse && (i >> kChunkBits) == chunks_.size()) {
      chunks_.push_back(std::make_unique_for_overwrite<raw[]>(kChunk));
    }
    new (&chunks_[i >> kChunkBits][i & (kChunk - 1)])
        value_type(std::piecewise_construct, std::forward_as_tuple(k),
                   std::forward_as_tuple(std::forward<Args>(args)...));
    if (reuse) {
      free_.pop_back();
    } else {
      ++used_;
    }
    return i;
  }

  void destroy(std::uint32_t i) {
    slot(i).~value_type();
    free_.push_back(i);
  }

  void swap(fingerprint_table& o) noexcept {
    index_.swap(o.index_);
    chunks_.swap(o.chunks_);
    free_.swap(o.free_);
    std::swap(used_, o.used_);
  }

  index_map index_;
  std::vector<std::unique_ptr<raw[]>> chunks_;
  std::vector<std::uint32_t> free_;  // slots below used_ that hold no entry
  std::uint32_t used_ = 0;           // slots ever constructed, in order
};

}  // namespace loopguard::daemon
