// The synthetic agents of `loopguard simulate`. A stuck agent keeps coming back to the swarm's
// dead end (the same call with the same failing result, shared by every stuck agent) between
// steps of its own work; a healthy agent only does varied work (different arguments,
// different results), which never counts toward a global loop.
#pragma once

#include <cstdint>

#include "loopguard/fingerprint.hpp"
#include "loopguard/protocol.hpp"

namespace loopguard::cli {

class simulated_agent {
 public:
  simulated_agent(std::size_t index, bool stuck) : index_(index), stuck_(stuck) {}

  bool stuck() const { return stuck_; }
  // The judged call the agent makes at `step` (0, 1, 2, ...), at time `t` seconds.
  protocol::event event(std::uint64_t step, double t) const;

 private:
  protocol::event dead_end(double t) const;
  protocol::event own_work(std::uint64_t step, double t) const;

  std::size_t index_;
  bool stuck_;
  fingerprinter fp_;
};

}  // namespace loopguard::cli
