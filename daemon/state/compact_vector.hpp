// A vector for a fingerprint's small lists (its window, workers, results and tallies): the
// first N elements are held inline, then one heap block that doubles its capacity as the list
// grows. Most fingerprints keep one or two of each inline, and a million of them are held at
// once, so the header is what counts: the inline elements (or the block's address) and a 32-bit
// size and capacity, 16 bytes for two 32-bit or one 64-bit element where boost's small_vector
// spends 32 (docs/performance.md, "CPU per event and memory per fingerprint").
//
// Elements must be trivially copyable: they are moved with memcpy and never destroyed. Growing
// one element at a time doubles the capacity (1, 2, 4, ...: boost's default 1.6x reallocated 6
// times on the way from 1 to 10 elements); resize() and reserve() allocate exactly what they are
// asked for, so a restore sizes each list to its rows. Erasing never gives memory back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace loopguard::daemon {

template <class T, std::uint32_t N>
class compact_vector {
  static_assert(N >= 1, "compact_vector holds at least one element inline");
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "compact_vector moves its elements with memcpy");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  compact_vector() = default;
  compact_vector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  compact_vector(const compact_vector& o) { assign(o.begin(), o.end()); }
  compact_vector(compact_vector&& o) noexcept { take_from(o); }
  compact_vector& operator=(const compact_vector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  compact_vector& operator=(compact_vector&& o) noexcept {
    if (this != &o) {
      release();
      take_from(o);
    }
    return *this;
  }
  compact_vector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~compact_vector() { release(); }

  size_type size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_type capacity() const { return cap_; }

  T* data() { return on_heap() ? heap() : inline_data(); }
  const T* data() const { return on_heap() ? heap() : inline_data(); }
  T& operator[](size_type i) { return data()[i]; }
  const T& operator[](size_type i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void push_back(const T& value) { emplace_back(value); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    const T value{std::forward<Args>(args)...};  // before a reallocation moves an argument
    if (size_ == cap_) reallocate(doubled());
    T* slot = data() + size_;
    std::memcpy(static_cast<void*>(slot), &value, sizeof(T));
    ++size_;
    return *slot;
  }
  iterator insert(const_iterator pos, const T& value) {
    const auto at = static_cast<size_type>(pos - begin());
    const T copy = value;
    if (size_ == cap_) reallocate(doubled());
    T* p = data();
    std::memmove(static_cast<void*>(p + at + 1), p + at, (size_ - at) * sizeof(T));
    std::memcpy(static_cast<void*>(p + at), &copy, sizeof(T));
    ++size_;
    return p + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    T* p = data();
    const auto from = static_cast<size_type>(first - p);
    const auto n = static_cast<size_type>(last - first);
    std::memmove(static_cast<void*>(p + from), p + from + n, (size_ - from - n) * sizeof(T));
    size_ -= static_cast<std::uint32_t>(n);
    return p + from;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void reserve(size_type n) {
    if (n > cap_) reallocate(checked(n));
  }
  // New elements are value-initialised.
  void resize(size_type n) {
    reserve(n);
    for (T* p = data() + size_; p < data() + n; ++p) ::new (static_cast<void*>(p)) T();
    size_ = static_cast<std::uint32_t>(n);
  }

  friend bool operator==(const compact_vector& a, const compact_vector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static constexpr std::size_t kBytes = std::max(N * sizeof(T), sizeof(T*));
  static constexpr std::size_t kAlign = std::max(alignof(T), alignof(T*));

  bool on_heap() const { return cap_ > N; }
  T* inline_data() { return std::launder(reinterpret_cast<T*>(bytes_)); }
  const T* inline_data() const { return std::launder(reinterpret_cast<const T*>(bytes_)); }
  T* heap() const {
    T* p = nullptr;
    std::memcpy(static_cast<void*>(&p), bytes_, sizeof p);
    return p;
  }
  void set_heap(T* p) { std::memcpy(bytes_, static_cast<const void*>(&p), sizeof p); }

  static std::uint32_t checked(size_type n) {
    if (n > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("compact_vector: more than 2^32 - 1 elements");
    }
    return static_cast<std::uint32_t>(n);
  }
  std::uint32_t doubled() const { return checked(size_type{cap_} * 2); }

  // Out of line: rare, and it keeps push_back's common path small.
  [[gnu::noinline]] void reallocate(std::uint32_t cap) {
    T* block = std::allocator<T>().allocate(cap);
    if (on_heap()) {
      T* old = heap();
      std::memcpy(static_cast<void*>(block), old, size_ * sizeof(T));
      std::allocator<T>().deallocate(old, cap_);
    } else {
      std::memcpy(static_cast<void*>(block), inline_data(), size_ * sizeof(T));
    }
    set_heap(block);
    cap_ = cap;
  }
  void release() {
    if (on_heap()) std::allocator<T>().deallocate(heap(), cap_);
    cap_ = N;
  }
  // Takes o's elements (its block, or a copy of its inline ones) and leaves o empty and inline.
  void take_from(compact_vector& o) {
    std::memcpy(bytes_, o.bytes_, kBytes);
    size_ = o.size_;
    cap_ = o.cap_;
    o.size_ = 0;
    o.cap_ = N;
  }
  void assign(const T* first, const T* last) {
    const auto n = static_cast<size_type>(last - first);
    size_ = 0;
    reserve(n);
    if (n) std::memcpy(static_cast<void*>(data()), first, n * sizeof(T));
    size_ = static_cast<std::uint32_t>(n);
  }

  alignas(kAlign) unsigned char bytes_[kBytes] = {};
  std::uint32_t size_ = 0;
  std::uint32_t cap_ = N;
};

}  // namespace loopguard::daemon
