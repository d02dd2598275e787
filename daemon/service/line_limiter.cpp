#include "service/line_limiter.hpp"

namespace loopguard::daemon {

line_limiter::admission line_limiter::admit(std::string_view kind, clock::time_point now) {
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) it = kinds_.emplace(std::string(kind), window_state{now}).first;
  window_state& w = it->second;
  admission a;
  if (now - w.start >= window_) {
    a.suppressed_before = w.held;
    w = window_state{now};
  }
  if (w.written < burst_) {
    ++w.written;
    a.write = true;
  } else {
    ++w.held;
  }
  return a;
}

std::vector<line_limiter::suppressed> line_limiter::expire(clock::time_point now) {
  std::vector<suppressed> out;
  for (auto it = kinds_.begin(); it != kinds_.end();) {
    window_state& w = it->second;
    if (now - w.start < window_) {
      ++it;
      continue;
    }
    if (w.held > 0) out.push_back({it->first, w.held});
    it = kinds_.erase(it);  // a quiet kind holds no memory
  }
  return out;
}

std::vector<line_limiter::suppressed> line_limiter::drain() {
  std::vector<suppressed> out;
  for (const auto& [kind, w] : kinds_) {
    if (w.held > 0) out.push_back({kind, w.held});
  }
  kinds_.clear();
  return out;
}

}  // namespace loopguard::daemon
