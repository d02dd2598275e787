#include "service/rows_worker.hpp"

#include <sys/resource.h>
#include <unistd.h>

namespace loopguard::daemon {

thread_rows_worker::thread_rows_worker(std::function<void()> done)
    : done_(std::move(done)), thread_([this] { run(); }) {}

thread_rows_worker::~thread_rows_worker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void thread_rows_worker::post(job j) {
  {
    std::lock_guard lock(mu_);
    job_ = std::move(j);
  }
  cv_.notify_all();
}

bool thread_rows_worker::busy() {
  std::lock_guard lock(mu_);
  return job_.has_value() || running_ || result_.has_value();
}

std::optional<rows_job_result> thread_rows_worker::take_result() {
  std::lock_guard lock(mu_);
  return std::exchange(result_, {});
}

void thread_rows_worker::wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !job_.has_value() && !running_; });
}

void thread_rows_worker::run() {
  // The compaction's writes yield the CPU to ingest and the group commits: a compaction may
  // take longer, an ack should not (docs/performance.md, "Compaction beside ingest"). Linux
  // applies a thread's nice value to that thread alone.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || job_.has_value(); });
    if (!job_) return;  // stopping, nothing posted
    job j = std::move(*job_);
    job_.reset();
    running_ = true;
    lock.unlock();
    rows_job_result r = j();
    j = nullptr;  // what the job owns (a flipped change set) is freed here, not under the lock
    lock.lock();
    running_ = false;
    result_ = std::move(r);
    cv_.notify_all();
    if (done_) {
      lock.unlock();
      done_();
      lock.lock();
    }
  }
}

}  // namespace loopguard::daemon
