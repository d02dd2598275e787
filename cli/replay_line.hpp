// One line of `loopguard replay`'s output (docs/trace-format.md) and its JSON form.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "loopguard/verdict.hpp"

namespace loopguard::cli {

// A global verdict that reached another worker of the swarm (`replay --daemon --deliveries`).
struct delivery {
  std::string worker;             // the worker that received it
  std::optional<std::size_t> at;  // its next event in the recording; nullopt: it had none left
};

struct replay_line {
  std::size_t event = 0;
  std::string worker, swarm;
  detection det;
  std::vector<delivery> deliveries;  // global lines from a daemon: who else received it
};

// The detection line, newline-terminated; `file` is the trace as printed.
std::string to_line(const std::string& file, const replay_line& l);
// One line per delivery: the detection line's fields plus "delivered_to" and "delivered_at"
// (an event index, or null).
std::string delivery_lines(const std::string& file, const replay_line& l);

}  // namespace loopguard::cli
