// `content`: a chunk repeating inside one streamed text (docs/detectors.md).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "finding.hpp"

namespace loopguard::sdk {

// The same chunk of characters repeating at short distance within one stream (the "chanting"
// loop). Decisions depend only on the text, never on how it was split into chunks: text is
// classified line by line (code fences are skipped; list items, table rows, headings, block
// quotes and divider lines reset the tracking and never fire it). Three backticks inside a line
// open or close a code block too, as gemini-cli counts them.
class content_loop_detector {
 public:
  explicit content_loop_detector(const content_rule& rule) : rule_(rule) {}

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
  std::optional<finding> index_chunk(std::size_t pos);
  struct slot;
  slot& slot_for(std::string_view chunk);
  std::size_t slot_index(std::uint64_t hash) const;
  void reset_tracking();

  // Chunk index: an open-addressing table from a chunk's rolling hash to the newest position it
  // was seen at; prev_[pos] links each position to the previous one with the same chunk, so the
  // last N occurrences are a walk along the links. `generation_` empties the table in O(1).
  struct slot {                    // 8 bytes: the table for the default 5000 bytes is 64 KiB
    std::uint16_t tag = 0;         // 16 more bits of the rolling hash than the slot index
    std::uint16_t generation = 0;  // the slot is empty unless this equals generation_
    std::uint32_t last = 0;        // newest position of the chunk
  };
  static constexpr std::uint32_t kNone = UINT32_MAX;
  static constexpr std::size_t kNoPos = SIZE_MAX;

  content_rule rule_;  // max_history counts bytes
  bool in_fence_ = false;
  std::uint8_t ticks_ = 0;  // backticks in a row just before the current position of the line
  line_kind kind_ = line_kind::undecided;
  std::string line_head_;    // the start of the current line, until its kind is known
  std::string history_;      // prose text since the last reset
  std::size_t scanned_ = 0;  // chunk start positions already indexed
  std::vector<slot> table_;
  std::vector<std::uint32_t> prev_;
  std::vector<std::uint32_t> count_;  // count_[pos]: occurrences of pos's chunk up to pos
  std::uint16_t generation_ = 1;
  std::uint64_t rolling_ = 0;  // hash of history_[rolling_pos_, rolling_pos_ + chunk)
  std::size_t rolling_pos_ = kNoPos;
  std::uint64_t top_power_ = 1;  // kBase^(chunk - 1)
  std::uint32_t detections_ = 0;
  std::size_t stream_start_ = 0;
};

}  // namespace loopguard::sdk
