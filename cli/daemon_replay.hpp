// `replay --daemon`: the recording's global detections from a real loopguardd. Every worker
// of the recording runs through its own daemon_client (all on one I/O thread); its judged
// calls (judged_calls: the same events offline replay applies) go to the daemon one at a time,
// each waited for until the daemon acknowledged it, so the verdicts it caused have arrived
// and the result is deterministic.
//
// A verdict appears as a `global` line at the event whose judged call caused it, on the
// causing worker, exactly as offline replay prints it. Its deliveries to the other workers of
// the swarm are kept on the line (replay_line::deliveries): before a worker's next event is
// fed, its client has received every verdict the swarm produced so far, and those that
// another worker caused are delivered at that event.
//
// Each swarm of the recording runs on the daemon as run_swarm_id(swarm, a fresh tag): its
// verdict messages name that id; the lines keep the recording's swarm.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "client_pool.hpp"
#include "global_source.hpp"
#include "judged_calls.hpp"

namespace loopguard::cli {

struct daemon_target {
  std::string url, token, ca_file;
  std::chrono::milliseconds timeout{10000};  // to connect, and for each acknowledgement
};

class daemon_replay final : public global_source {
 public:
  // Connects one client per (swarm, worker) of `tr`, all before the first event, so every
  // worker of a swarm receives every verdict of it. An error is one line: a bad option
  // (URL, a name longer than the protocol allows), a refusal, or no daemon within the timeout.
  static result<std::unique_ptr<daemon_replay>> connect(const daemon_target& target,
                                                        const trace& tr,
                                                        const manager_config& config);

  status on_event(std::size_t index) override;
  result<std::vector<replay_line>> finish() override;

  // The recording's swarm -> the id it ran under on the daemon.
  std::map<std::string, std::string> run_ids() const;

 private:
  struct swarm_run {
    std::string id;
    std::vector<std::size_t> lines;  // the swarm's k-th verdict message -> its line in lines_
    // Whom each verdict message was for (protocol verdict.to; empty: every worker); the
    // worker whose event caused it receives it whatever it says.
    std::vector<std::vector<std::string>> to;
  };
  struct worker_link {
    daemon_client* client = nullptr;
    swarm_run* swarm = nullptr;
    std::string worker;
    std::size_t cursor = 0;      // the swarm's verdict messages before it are dealt with
    std::uint64_t received = 0;  // verdict messages taken from the client
  };
  bool addressed(const worker_link& w, std::size_t k) const;  // the swarm's k-th is for w

  daemon_replay(const daemon_target& target, const trace& tr, const manager_config& config);
  status add_workers();
  status deliver(worker_link& w, std::optional<std::size_t> at);
  status send(worker_link& w, const judged_call& judged, std::size_t index);

  daemon_target target_;
  const trace& tr_;
  judged_calls calls_;
  std::map<std::string, swarm_run> swarms_;
  std::map<std::pair<std::string, std::string>, worker_link> links_;
  std::vector<replay_line> lines_;
  client_pool pool_;  // last: its clients close before the links above go
};

}  // namespace loopguard::cli
