// A checkpoint_store that forwards to another (the SQLite store, in memory or on a file) and
// fails the Nth step (1-based; 0 = never), counting every write step and commit, of the main
// file and of the rows file (rows() wraps the other's rows store with the same count), so a test
// can reach every failure point by looping N upward. Loading is forwarded, never failed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "store/checkpoint_store.hpp"

namespace loopguard::daemon {

class fault_injecting_store final : public checkpoint_store {
 public:
  // What the count covers: both files' steps, or the main file's only.
  enum class scope : std::uint8_t { both_files, main_file };
  explicit fault_injecting_store(checkpoint_store& inner, std::size_t fail_at = 0,
                                 scope counted = scope::both_files)
      : inner_(inner), counted_(counted), fail_at_(fail_at) {}

  void fail_at(std::size_t n) {
    fail_at_ = n;
    count_ = 0;
  }
  std::size_t steps() const { return count_; }  // steps attempted since fail_at()
  bool failed() const { return failed_; }
  // Per trim_log() call that succeeded, in order: whether it reported covered records left.
  const std::vector<bool>& trims() const { return trims_; }

  result<stored_state> load_streaming(const fingerprint_sink& sink) override {
    return inner_.load_streaming(sink);
  }
  status begin() override {
    return step([&] { return inner_.begin(); });
  }
  status clear_swarm(std::string_view swarm) override {
    return step([&] { return inner_.clear_swarm(swarm); });
  }
  status put_swarm(const swarm_row& row) override {
    return step([&] { return inner_.put_swarm(row); });
  }
  status put_worker(const worker_row& row) override {
    return step([&] { return inner_.put_worker(row); });
  }
  status erase_sequence(const worker_identity& id) override {
    return step([&] { return inner_.erase_sequence(id); });
  }
  status put_seen(const seen_row& row) override {
    return step([&] { return inner_.put_seen(row); });
  }
  status put_expired(const expired_row& row) override {
    return step([&] { return inner_.put_expired(row); });
  }
  status erase_expired(const worker_identity& id) override {
    return step([&] { return inner_.erase_expired(id); });
  }
  status erase_swarm_seen(std::string_view swarm) override {
    return step([&] { return inner_.erase_swarm_seen(swarm); });
  }
  status put_swarm_seen(const swarm_seen_row& row) override {
    return step([&] { return inner_.put_swarm_seen(row); });
  }
  status put_sequence(const sequence_row& row) override {
    return step([&] { return inner_.put_sequence(row); });
  }
  status truncate_log() override {
    return step([&] { return inner_.truncate_log(); });
  }
  status append_log(std::string_view record) override {
    return step([&] { return inner_.append_log(record); });
  }
  result<std::int64_t> log_end() override {
    if (++count_ == fail_at_) return injected();
    return inner_.log_end();
  }
  status flip(std::int64_t generation, std::int64_t boundary) override {
    return step([&] { return inner_.flip(generation, boundary); });
  }
  result<log_trim> trim_log(std::size_t max_bytes) override {
    if (++count_ == fail_at_) return injected();
    auto r = inner_.trim_log(max_bytes);
    if (r) trims_.push_back(r->more);
    return r;
  }
  // A read, like loading: not counted as a step; fails the next `n` calls after
  // fail_generation(n).
  result<std::int64_t> generation() override {
    ++generation_reads_;
    if (failing_generations_ > 0) {
      --failing_generations_;
      return status::error("injected fault reading the generation");
    }
    return inner_.generation();
  }
  void fail_generation(std::size_t n) { failing_generations_ = n; }
  std::size_t generation_reads() const { return generation_reads_; }
  rows_store& rows() override { return rows_; }
  status commit() override {
    return step([&] { return inner_.commit(); });
  }
  void rollback() noexcept override { inner_.rollback(); }

 private:
  status injected() {
    failed_ = true;
    return status::error("injected fault at step " + std::to_string(count_));
  }
  template <class F>
  status step(F&& f) {
    if (++count_ == fail_at_) return injected();
    return f();
  }

  // The rows file's steps, counted with the main file's.
  class rows_wrapper final : public rows_store {
   public:
    explicit rows_wrapper(fault_injecting_store& owner) : owner_(owner) {}
    rows_store& inner() { return owner_.inner_.rows(); }
    status load(std::int64_t generation, const fingerprint_sink& sink) override {
      return inner().load(generation, sink);
    }
    status begin() override {
      return step([&] { return inner().begin(); });
    }
    status stage_fingerprint(std::int64_t generation, const fingerprint_row& row) override {
      return step([&] { return inner().stage_fingerprint(generation, row); });
    }
    status stage_erase(std::int64_t generation, const fingerprint_ref& ref) override {
      return step([&] { return inner().stage_erase(generation, ref); });
    }
    status stage_clear(std::int64_t generation, std::string_view swarm) override {
      return step([&] { return inner().stage_clear(generation, swarm); });
    }
    result<std::size_t> fold_staged(std::int64_t current, std::size_t limit) override {
      if (counted() && ++owner_.count_ == owner_.fail_at_) return owner_.injected();
      return inner().fold_staged(current, limit);
    }
    status commit() override {
      return step([&] { return inner().commit(); });
    }
    void rollback() noexcept override { inner().rollback(); }

   private:
    bool counted() const { return owner_.counted_ == scope::both_files; }
    template <class F>
    status step(F&& f) {
      return counted() ? owner_.step(std::forward<F>(f)) : f();
    }
    fault_injecting_store& owner_;
  };

  checkpoint_store& inner_;
  rows_wrapper rows_{*this};
  scope counted_;
  std::atomic<std::size_t> fail_at_;
  // Atomic: with a thread_rows_worker the rows file's steps run on another thread.
  std::atomic<std::size_t> count_ = 0;
  std::vector<bool> trims_;
  std::atomic<bool> failed_ = false;
  std::size_t failing_generations_ = 0;  // the committing thread's only
  std::size_t generation_reads_ = 0;
};

}  // namespace loopguard::daemon
