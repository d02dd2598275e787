#include "loopguard/daemon/swarm_service.hpp"

namespace loopguard::daemon {

swarm_service::swarm_service(swarm_rules rules) : state_(std::move(rules)) {}

std::optional<std::string> swarm_service::restore(stored_state&& stored) {
  std::lock_guard lock(mu_);
  state_.restore(std::move(stored.state));
  ledger_.restore(stored.sequences);
  log_bytes_ = 0;
  for (const auto& record : stored.log) {
    if (auto e = replay_log_record(record, state_)) return e;
    log_bytes_ += record.size();
  }
  return std::nullopt;
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
  for (const auto& ev : batch) {
    if (ev.seq <= last) {
      ++r.duplicates;
      continue;
    }
    if (ev.seq != last + 1) {
      r.error = protocol::error{std::string(protocol::codes::sequence_gap),
                                "expected sequence number " + std::to_string(last + 1) + ", got " +
                                    std::to_string(ev.seq) +
                                    "; declare dropped events with a gap message"};
      break;
    }
    e.tool = ev.tool;
    e.summary = ev.summary;
    e.exact = ev.exact;
    e.structural = ev.structural;
    e.result = ev.result;
    e.ok = ev.ok;
    e.t = ev.t;
    auto v = state_.apply(e);
    log_.event(e);
    for (auto& x : v) r.verdicts.push_back(std::move(x));
    last = ev.seq;
    ++r.applied;
  }
  if (r.applied > 0) ledger_.advance(id, last);
  pending_events_ += r.applied;
  r.last_seq = last;
  return r;
}

std::optional<protocol::error> swarm_service::declare_gap(const worker_identity& id,
                                                          std::uint64_t from, std::uint64_t to,
                                                          std::uint64_t& epoch) {
  std::lock_guard lock(mu_);
  epoch = epoch_;
  if (auto e = ledger_.declare_gap(id, from, to)) {
    return protocol::error{std::string(protocol::codes::bad_gap), *e};
  }
  return std::nullopt;
}

bool swarm_service::complete(std::string_view swarm, std::uint64_t& epoch) {
  std::lock_guard lock(mu_);
  epoch = epoch_;
  if (!state_.complete(swarm)) return false;
  log_.complete(swarm);
  return true;
}

std::uint64_t swarm_service::durable_seq(const worker_identity& id) const {
  std::lock_guard lock(mu_);
  return ledger_.durable(id);
}

checkpoint swarm_service::take_checkpoint(std::uint64_t& epoch, bool compact) {
  std::lock_guard lock(mu_);
  checkpoint c;
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
  epoch = epoch_++;
  pending_events_ = 0;
  return c;
}

void swarm_service::mark_durable(const checkpoint& c) {
  std::lock_guard lock(mu_);
  ledger_.mark_durable(c.sequences);
}

std::size_t swarm_service::log_bytes() const {
  std::lock_guard lock(mu_);
  return log_bytes_;
}

std::size_t swarm_service::pending_events() const {
  std::lock_guard lock(mu_);
  return pending_events_;
}

}  // namespace loopguard::daemon
