// `content`: a chunk repeating inside one streamed text (docs/detectors.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_index.hpp"
#include "finding.hpp"

namespace loopguard::sdk {

// The same chunk of characters repeating at short distance within one stream (the "chanting"
// loop). Decisions depend only on the text, never on how it was split into chunks: text is
// classified line by line (code fences are skipped; list items, table rows, headings, block
// quotes and divider lines reset the tracking and never fire it). Three backticks inside a line
// open or close a code block too, as gemini-cli counts them.
class content_loop_detector {
 public:
  explicit content_loop_detector(const content_rule& rule)
      : rule_(rule), index_(rule.chunk_size, rule.occurrences, rule.max_distance) {}

  std::optional<finding> feed(std::string_view chunk, std::size_t event_index);
  // The stream ended (the turn is over): a pending partial line is classified and scanned.
  std::optional<finding> finish(std::size_t event_index);
  void reset();  // forget everything, including fence state and detections in this stream

 private:
  enum class line_kind { undecided, prose, skip };
  std::optional<finding> decide_line(std::size_t event_index);
  std::optional<finding> consume(std::string_view part, std::size_t event_index);
  void toggle_fence();
  std::optional<finding> append(std::string_view text, std::size_t event_index);
  std::optional<finding> scan();
  void reset_tracking();

  content_rule rule_;  // max_history counts bytes
  bool in_fence_ = false;
  std::uint8_t ticks_ = 0;  // backticks in a row just before the current position of the line
  line_kind kind_ = line_kind::undecided;
  std::string line_head_;  // the start of the current line, until its kind is known
  std::string history_;    // prose text since the last reset
  chunk_index index_;      // of history_'s chunks
  std::uint32_t detections_ = 0;
  std::size_t stream_start_ = 0;
};

}  // namespace loopguard::sdk
