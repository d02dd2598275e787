// `output_similarity`: repeated text across turns (docs/detectors.md).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "finding.hpp"

namespace loopguard::sdk {

// Each text output against the last `history` outputs with ratio() >= threshold.
class output_similarity_detector {
 public:
  explicit output_similarity_detector(const output_similarity_rule& rule) : rule_(rule) {}

  // `event_index` is where this output was seen. Returns a finding when it is similar to one of
  // the remembered outputs.
  std::optional<finding> check(std::string_view text, std::size_t event_index);
  void reset();

 private:
  struct output {
    std::string text;
    std::size_t event_index;
  };
  output_similarity_rule rule_;
  std::deque<output> recent_;
  std::uint32_t streak_ = 0;  // similar outputs in a row
};

}  // namespace loopguard::sdk
