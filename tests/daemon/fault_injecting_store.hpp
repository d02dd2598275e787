// A checkpoint_store that forwards to another (the SQLite store, in memory or on a file) and
// fails the Nth step (1-based; 0 = never), counting every write step and commit, so a test can
// reach every failure point by looping N upward. Loading is forwarded, never failed.
#pragma once

#include <cstddef>
#include <vector>

#include "store/checkpoint_store.hpp"

namespace loopguard::daemon {

class fault_injecting_store final : public checkpoint_store {
 public:
  explicit fault_injecting_store(checkpoint_store& inner, std::size_t fail_at = 0)
      : inner_(inner), fail_at_(fail_at) {}

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
  status put_fingerprint(const fingerprint_row& row) override {
    return step([&] { return inner_.put_fingerprint(row); });
  }
  status erase_fingerprint(const fingerprint_ref& ref) override {
    return step([&] { return inner_.erase_fingerprint(ref); });
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
  status stage_fingerprint(std::int64_t generation, const fingerprint_row& row) override {
    return step([&] { return inner_.stage_fingerprint(generation, row); });
  }
  status stage_erase(std::int64_t generation, const fingerprint_ref& ref) override {
    return step([&] { return inner_.stage_erase(generation, ref); });
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
  result<std::size_t> fold_staged(std::size_t limit) override {
    if (++count_ == fail_at_) return injected();
    return inner_.fold_staged(limit);
  }
  // A read, like loading: forwarded, never failed.
  result<std::int64_t> generation() override { return inner_.generation(); }
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

  checkpoint_store& inner_;
  std::size_t fail_at_;
  std::size_t count_ = 0;
  std::vector<bool> trims_;
  bool failed_ = false;
};

}  // namespace loopguard::daemon
