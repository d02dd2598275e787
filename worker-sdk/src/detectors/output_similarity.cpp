#include <cstdio>

#include "loopguard/similarity.hpp"
#include "output_similarity.hpp"

namespace loopguard::sdk {

std::optional<finding> output_similarity_detector::check(std::string_view text,
                                                         std::size_t event_index) {
  if (text.empty()) return std::nullopt;  // nothing said is not a repetition
  double best = 0;
  std::size_t best_index = 0;
  if (!recent_.empty()) {
    const similarity::cached_ratio current(text);
    for (const auto& prev : recent_) {
      const double score = current.similarity(std::string_view(prev.text), rule_.threshold);
      if (score >= rule_.threshold && score > best) {
        best = score;
        best_index = prev.event_index;
      }
    }
  }
  const bool similar = best >= rule_.threshold && best > 0;
  if (!similar || rule_.record_similar) {
    recent_.push_back({std::string(text), event_index});
    while (recent_.size() > rule_.history) recent_.pop_front();
  }
  if (!similar) {
    streak_ = 0;
    return std::nullopt;
  }
  ++streak_;
  finding f;
  f.detector = detector_id::output_similarity;
  f.identity = identity_of(fixed_loop::similar_replies);
  f.count = streak_;
  f.steps = rule_.steps;
  f.confidence = best / 100.0;
  f.loop_start = best_index;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", best);
  f.detail = buf;
  return f;
}

void output_similarity_detector::reset() {
  recent_.clear();
  streak_ = 0;
}

}  // namespace loopguard::sdk
