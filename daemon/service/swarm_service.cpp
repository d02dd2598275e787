#include "service/swarm_service.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>
#include <utility>

#include "loopguard/utf8.hpp"

namespace loopguard::daemon {
namespace {

// Full batches of rows from the loading thread to the restoring one, and emptied batches back
// (their capacity is reused). At most kMaxFull full batches wait: memory stays bounded.
class batch_channel {
 public:
  static constexpr std::size_t kMaxFull = 16;

  // Loader: hands over `batch` (waits while kMaxFull wait), and takes back an emptied one (once
  // the restorer has given up, `batch` is only emptied).
  void push(restore_batch& batch) {
    {
      std::unique_lock lock(mu_);
      space_.wait(lock, [&] { return full_.size() < kMaxFull || aborted_; });
      if (!aborted_) {
        full_.push_back(std::move(batch));
        batch = {};
        if (!empty_.empty()) {
          batch = std::move(empty_.back());
          empty_.pop_back();
        }
        ready_.notify_one();
      }
    }
    batch.clear();
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_one();
  }
  // Restorer: the next full batch; false when the loader has closed and none is left.
  bool pop(restore_batch& batch) {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return !full_.empty() || closed_; });
    if (full_.empty()) return false;
    batch = std::move(full_.front());
    full_.pop_front();
    space_.notify_one();
    return true;
  }
  void recycle(restore_batch&& batch) {
    std::lock_guard lock(mu_);
    empty_.push_back(std::move(batch));
  }
  // The restorer gave up: the loader's pushes return at once from now on.
  void abort() {
    std::lock_guard lock(mu_);
    aborted_ = true;
    space_.notify_one();
  }

 private:
  std::mutex mu_;  // guards everything below
  std::condition_variable ready_, space_;
  std::deque<restore_batch> full_;
  std::vector<restore_batch> empty_;
  bool closed_ = false, aborted_ = false;
};

// What is on disk is repaired, not trusted: a database written before names were checked at
// the boundary may hold strings that are not valid UTF-8 (utf8::repair's rule).
std::size_t repair(std::string& s) {
  return utf8::repair_in_place(s);
}
// The fingerprint rows are repaired as they are restored (restore_batch).
std::size_t repair(stored_state& st) {
  std::size_t n = 0;
  for (auto& r : st.state.swarms) n += repair(r.swarm);
  for (auto& r : st.state.workers) n += repair(r.swarm) + repair(r.name);
  for (auto& r : st.sequences)
    n += repair(r.id.swarm) + repair(r.id.worker) + repair(r.id.incarnation);
  return n;
}

}  // namespace

double swarm_service::system_wall_clock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

swarm_service::swarm_service(swarm_rules rules, state_options options, wall_clock clock)
    : state_(std::move(rules), options), clock_(std::move(clock)) {}

result<swarm_service::restore_report> swarm_service::restore_from(checkpoint_store& store) {
  restore_report r;
  std::lock_guard lock(mu_);
  state_.restore_begin();
  auto stored = stream_fingerprints(store, r);
  const status s = stored ? restore_stored(*stored, r) : stored.error();
  if (!s.ok()) {
    state_.restore_begin();
    ledger_.restore({});
    idle_.restore({}, {}, {}, {}, clock_());
    log_bytes_ = 0;
    return s;
  }
  return r;
}

result<stored_state> swarm_service::stream_fingerprints(checkpoint_store& store,
                                                        restore_report& r) {
  result<stored_state> stored;
  batch_channel channel;
  // The store is used by the loader thread only until it is joined.
  std::thread loader([&] {
    try {
      restore_batch batch;
      stored = store.load_streaming([&](fingerprint_row& row) {
        batch.add(row);
        if (batch.size() == kRestoreBatchRows) channel.push(batch);
      });
      if (stored && !batch.empty()) channel.push(batch);  // a refused load's rest is not wanted
    } catch (const std::exception& e) {  // out of memory outside the store's own guard
      stored = status::error(std::string("restoring the fingerprint rows: ") + e.what());
    }
    channel.close();
  });
  try {
    restore_batch batch;
    while (channel.pop(batch)) {
      r.fingerprints += batch.size();
      state_.restore_fingerprints(batch);
      r.repaired += batch.repaired();
      channel.recycle(std::move(batch));
    }
  } catch (...) {
    channel.abort();
    loader.join();
    throw;
  }
  loader.join();
  return stored;
}

status swarm_service::restore_stored(stored_state& stored, restore_report& r) {
  r.repaired += repair(stored);
  state_.restore_swarms(stored.state.swarms, stored.state.workers);
  r.workers = stored.state.workers.size();
  r.sequences = stored.sequences.size();
  r.records = stored.log.size();
  ledger_.restore(stored.sequences);
  log_bytes_ = 0;
  for (const auto& record : stored.log) {
    status s = replay_log_record(record, state_, &r.repaired);
    if (!s.ok()) return s;
    log_bytes_ += record.size();
  }
  // Retention: after the replay, which may have expired or revived swarms.
  std::vector<seen_row> seen;
  seen.reserve(stored.sequences.size());
  for (const auto& row : stored.sequences) {
    if (row.seq > 0) seen.push_back({row.id, row.seen});
  }
  std::vector<std::string> live;
  for (const auto& sw : state_.swarms()) {
    if (sw.expired == 0) live.push_back(sw.swarm);
  }
  for (auto& row : stored.swarms_seen) r.repaired += repair(row.swarm);
  for (auto& row : stored.expired) {
    r.repaired += repair(row.id.swarm) + repair(row.id.worker) + repair(row.id.incarnation);
  }
  idle_.restore(seen, stored.swarms_seen, live, stored.expired, clock_());
  r.expired = stored.expired.size();
  return {};
}

ingest_result swarm_service::ingest(const worker_identity& id,
                                    const std::vector<protocol::event>& batch) {
  ingest_result r;
  swarm_event e;
  e.swarm = id.swarm;
  e.worker = id.worker;
  std::lock_guard lock(mu_);
  r.epoch = epoch_;
  std::uint64_t last = ledger_.applied(id);
  const shared_economics_state::read_ahead ahead(state_, id.swarm, batch);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ahead.before(i);
    const protocol::event& ev = batch[i];
    if (ev.seq <= last) {
      ++r.duplicates;
      continue;
    }
    if (ev.seq != last + 1) {
      r.error =
          status::error(protocol::codes::sequence_gap,
                        "expected sequence number " + std::to_string(last + 1) + ", got " +
                            std::to_string(ev.seq) + "; declare dropped events with a gap message");
      break;
    }
    assign(e, ev);
    auto v = state_.apply(e);
    log_.event(e);
    for (auto& x : v) r.verdicts.push_back(std::move(x));
    last = ev.seq;
    ++r.applied;
  }
  if (r.applied > 0) ledger_.advance(id, last);
  r.last_seq = last;
  idle_.touch(id, clock_());
  return r;
}

result<std::uint64_t> swarm_service::declare_gap(const worker_identity& id, std::uint64_t from,
                                                 std::uint64_t to) {
  std::lock_guard lock(mu_);
  const status s = ledger_.declare_gap(id, from, to);
  if (!s.ok()) return status::error(protocol::codes::bad_gap, s.message());
  idle_.touch(id, clock_());
  return epoch_;
}

result<std::uint64_t> swarm_service::complete(std::string_view swarm) {
  std::lock_guard lock(mu_);
  if (!state_.complete(swarm)) {
    return status::error("swarm \"" + std::string(swarm) + "\" has no state to forget");
  }
  log_.complete(swarm);
  return epoch_;
}

status swarm_service::attach(const worker_identity& id) {
  const double now = clock_();
  std::lock_guard lock(mu_);
  if (!idle_.attach(id, now)) {
    return status::error(protocol::codes::incarnation_expired,
                         "incarnation \"" + id.incarnation + "\" of worker \"" + id.worker +
                             "\" was expired after being idle; start a new incarnation and "
                             "declare what was not acknowledged as a gap");
  }
  return {};
}

void swarm_service::touch(const worker_identity& id) {
  const double now = clock_();
  std::lock_guard lock(mu_);
  idle_.touch(id, now);
}

void swarm_service::detach(const worker_identity& id) {
  const double now = clock_();
  std::lock_guard lock(mu_);
  idle_.detach(id, now);
}

retention_report swarm_service::sweep(const retention_limits& limits) {
  const double now = clock_();
  retention_report r;
  std::lock_guard lock(mu_);
  const retention_sweep found = idle_.sweep(now, limits);
  for (const auto& id : found.incarnations) {
    if (ledger_.applied(id) == 0) continue;  // it never sent anything: nothing to refuse
    ledger_.erase(id);
    idle_.record_expired(id, now);
    ++r.incarnations;
  }
  for (const auto& name : found.swarms) {
    if (!state_.expire(name, now)) continue;  // completed meanwhile, or only said hello
    log_.expire(name, now);
    ++r.swarms;
  }
  r.forgotten = found.forgotten;
  return r;
}

retention_gauges swarm_service::retention() const {
  std::lock_guard lock(mu_);
  return {ledger_.size(), idle_.expired()};
}

std::vector<sequence_row> swarm_service::sequences() const {
  std::lock_guard lock(mu_);
  return ledger_.rows();
}

std::optional<swarm_export> swarm_service::export_swarm(std::string_view swarm) const {
  std::lock_guard lock(mu_);
  auto rows = state_.snapshot(swarm);
  if (!rows) return std::nullopt;
  swarm_export e;
  e.swarm = std::move(rows->swarms.front());
  e.workers = std::move(rows->workers);
  e.fingerprints = std::move(rows->fingerprints);
  for (auto& row : ledger_.rows()) {
    if (row.id.swarm != swarm) continue;
    row.seen = idle_.seen(row.id);
    e.sequences.push_back(std::move(row));
  }
  e.expired = idle_.expired_of(swarm);
  e.seen = e.swarm.expired == 0 ? idle_.swarm_seen(swarm) : 0;
  normalize(e);
  return e;
}

std::uint64_t swarm_service::durable_seq(const worker_identity& id) const {
  std::lock_guard lock(mu_);
  return ledger_.durable(id);
}

checkpoint swarm_service::take_checkpoint(bool compact) {
  std::lock_guard lock(mu_);
  checkpoint c;
  c.epoch = epoch_++;
  c.compact = compact;
  if (compact) {
    c.state = state_.take_changes();  // covers the pending record: drop it
    log_.take();
    log_bytes_ = 0;
  } else if (log_.bytes() > 0) {
    log_bytes_ += log_.bytes();
    c.log.push_back(log_.take());
  }
  c.sequences = ledger_.take_changes();
  for (auto& row : c.sequences) row.seen = idle_.seen(row.id);
  c.retention = idle_.take_changes();
  return c;
}

staged_take swarm_service::take_staged_checkpoint() {
  std::lock_guard lock(mu_);
  staged_take t;
  checkpoint& c = t.commit;
  c.epoch = epoch_++;
  // The record is written as usual (the old rows plus the whole log must still restore until
  // the new rows become current); the rows cover it: the log counts from here.
  if (log_.bytes() > 0) c.log.push_back(log_.take());
  c.log_mark = c.log.size();
  log_bytes_ = 0;
  t.rows = state_.take_changes();
  c.sequences = ledger_.take_changes();
  for (auto& row : c.sequences) row.seen = idle_.seen(row.id);
  c.retention = idle_.take_changes();
  return t;
}

state_changes swarm_service::take_rows(std::size_t limit) {
  std::lock_guard lock(mu_);
  return state_.take_changes_part(limit);
}

void swarm_service::mark_durable(const checkpoint& c) {
  std::lock_guard lock(mu_);
  ledger_.mark_durable(c.sequences);
}

std::size_t swarm_service::log_bytes() const {
  std::lock_guard lock(mu_);
  return log_bytes_;
}

}  // namespace loopguard::daemon
