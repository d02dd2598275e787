// Where a compaction's rows-file transactions run (docs/storage.md, "Compaction in chunks"):
// group_committer hands each one (stage a batch, fold staged rows) to a rows_worker and picks its
// result up at a later commit, so the group commits, and the acks waiting for them, never wait
// for the rows file. inline_rows_worker runs a job as it is posted (tests, offline tools: every
// step in a fixed order); thread_rows_worker runs it on a thread of its own (the daemon).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "loopguard/status.hpp"

namespace loopguard::daemon {

// What a job did: ok or why it failed, and the staged rows it folded (a fold).
struct rows_job_result {
  status result;
  std::size_t folded = 0;
};

class rows_worker {
 public:
  // One rows-file transaction.
  using job = std::function<rows_job_result()>;
  virtual ~rows_worker() = default;
  // Starts `j`. Precondition: !busy() and no result waiting (take_result() returned it).
  virtual void post(job j) = 0;
  // A job was posted and its result not yet taken.
  virtual bool busy() = 0;
  // The finished job's result, once; nothing while it runs (or none was posted).
  virtual std::optional<rows_job_result> take_result() = 0;
  // Waits until the job posted (if any) has finished; its result stays to be taken.
  virtual void wait() = 0;
};

class inline_rows_worker final : public rows_worker {
 public:
  void post(job j) override { result_ = j(); }
  bool busy() override { return result_.has_value(); }
  std::optional<rows_job_result> take_result() override { return std::exchange(result_, {}); }
  void wait() override {}

 private:
  std::optional<rows_job_result> result_;
};

class thread_rows_worker final : public rows_worker {
 public:
  // `done` runs on the worker's thread after each job (the checkpointer's nudge: take the
  // result and post the next).
  explicit thread_rows_worker(std::function<void()> done);
  ~thread_rows_worker() override;  // waits for the running job, then joins
  void post(job j) override;
  bool busy() override;
  std::optional<rows_job_result> take_result() override;
  void wait() override;

 private:
  void run();
  std::function<void()> done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<job> job_;                 // posted, not yet started
  bool running_ = false;                   // a job runs
  std::optional<rows_job_result> result_;  // finished, not yet taken
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace loopguard::daemon
