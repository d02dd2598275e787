#include "daemon_replay.hpp"

#include <algorithm>

#include "loopguard/swarm_detection.hpp"
#include "run_swarm_id.hpp"

namespace loopguard::cli {
namespace {

client_options options_for(const daemon_target& target, const std::string& swarm,
                           const std::string& worker) {
  client_options o;
  o.url = target.url;
  o.token = target.token;
  o.ca_file = target.ca_file;
  o.swarm = swarm;
  o.worker = worker;
  o.flush_delay = std::chrono::milliseconds(0);  // one event at a time: nothing to batch
  o.backoff_min = std::chrono::milliseconds(50);
  o.backoff_max = std::chrono::milliseconds(500);
  o.report_detections = false;  // replay prints local detections itself
  return o;
}

bool same_verdict(const protocol::verdict& v, const detection& d) {
  return v.level == d.level && v.calls == d.count && v.message == d.message;
}

}  // namespace

daemon_replay::daemon_replay(const daemon_target& target, const trace& tr,
                             const manager_config& config)
    : target_(target), tr_(tr), calls_(tr, config.fingerprint) {}

result<std::unique_ptr<daemon_replay>> daemon_replay::connect(const daemon_target& target,
                                                              const trace& tr,
                                                              const manager_config& config) {
  std::unique_ptr<daemon_replay> r(new daemon_replay(target, tr, config));
  if (status s = r->add_workers(); !s.ok()) return s;
  if (status s = r->pool_.wait_connected(target.timeout); !s.ok()) return s;
  return r;
}

status daemon_replay::add_workers() {
  const std::string tag = random_run_tag();
  for (const trace_event& ev : tr_.events) {
    auto [sit, new_swarm] = swarms_.try_emplace(ev.swarm);
    if (new_swarm) sit->second.id = run_swarm_id(ev.swarm, tag);
    auto [wit, new_worker] = links_.try_emplace({ev.swarm, ev.worker});
    if (!new_worker) continue;
    client_options o = options_for(target_, sit->second.id, ev.worker);
    if (status s = validate(o); !s.ok()) return s.with_context("--daemon: ");
    wit->second = {&pool_.add(std::move(o)), &sit->second, ev.worker, 0};
  }
  return {};
}

status daemon_replay::on_event(std::size_t index) {
  const trace_event& ev = tr_.events[index];
  worker_link& w = links_.at({ev.swarm, ev.worker});
  if (status s = deliver(w, index); !s.ok()) return s;
  const auto judged = calls_.at(index);
  return judged ? send(w, *judged, index) : status();
}

bool daemon_replay::addressed(const worker_link& w, std::size_t k) const {
  const auto& to = w.swarm->to[k];
  return to.empty() || std::find(to.begin(), to.end(), w.worker) != to.end() ||
         lines_[w.swarm->lines[k]].worker == w.worker;
}

// Takes every verdict the swarm produced for `w` that it has not taken yet: each one another
// worker caused is delivered to `w` at its event `at`.
status daemon_replay::deliver(worker_link& w, std::optional<std::size_t> at) {
  std::uint64_t produced = w.received;
  for (std::size_t k = w.cursor; k < w.swarm->lines.size(); ++k) produced += addressed(w, k);
  if (!w.client->wait_verdicts(produced, target_.timeout)) {
    return daemon_failure(*w.client, "worker \"" + w.worker + "\" did not receive verdict " +
                                         std::to_string(produced) + " within " +
                                         duration_words(target_.timeout));
  }
  for (const protocol::verdict& v : w.client->take_verdicts()) {
    while (w.cursor < w.swarm->lines.size() && !addressed(w, w.cursor)) ++w.cursor;
    if (w.cursor >= w.swarm->lines.size() ||
        !same_verdict(v, lines_[w.swarm->lines[w.cursor]].det)) {
      return status::error("the daemon at " + target_.url + " sent worker \"" + w.worker +
                           "\" a verdict no judged call caused (\"" + v.message + "\")");
    }
    replay_line& line = lines_[w.swarm->lines[w.cursor++]];
    ++w.received;
    if (line.worker != w.worker) line.deliveries.push_back({w.worker, at});
  }
  return {};
}

// Sends one judged call, waits for its acknowledgement, and takes the verdicts it caused.
status daemon_replay::send(worker_link& w, const judged_call& judged, std::size_t index) {
  const std::uint64_t seq = w.client->send(judged.event);
  if (!w.client->wait_acknowledged(seq, target_.timeout)) {
    return daemon_failure(*w.client, "no acknowledgement of event " + std::to_string(index) +
                                         " from the daemon at " + target_.url + " within " +
                                         duration_words(target_.timeout));
  }
  const trace_event& ev = tr_.events[index];
  // Every verdict before these was dealt with by deliver(); these are all this event caused.
  for (protocol::verdict& v : w.client->take_verdicts()) {
    ++w.received;
    w.swarm->lines.push_back(lines_.size());
    w.swarm->to.push_back(std::move(v.to));
    lines_.push_back({index, ev.worker, ev.swarm, swarm_detection(v, judged.call), {}});
  }
  w.cursor = w.swarm->lines.size();
  return {};
}

result<std::vector<replay_line>> daemon_replay::finish() {
  for (auto& [key, w] : links_) {
    if (status s = deliver(w, std::nullopt); !s.ok()) return s;
  }
  return std::move(lines_);
}

std::map<std::string, std::string> daemon_replay::run_ids() const {
  std::map<std::string, std::string> out;
  for (const auto& [swarm, run] : swarms_) out.emplace(swarm, run.id);
  return out;
}

}  // namespace loopguard::cli
