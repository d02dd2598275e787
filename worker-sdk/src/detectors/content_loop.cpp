#include <algorithm>
#include <set>

#include "text_detectors.hpp"

namespace loopguard::sdk {
namespace {

// How many characters of a line decide its kind (enough for "```", "| ", "12. ", "### ").
constexpr std::size_t kHeadChars = 8;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Markdown structure that legitimately repeats: list items, table rows and rules, headings,
// block quotes, divider lines. Judged on the line's first characters (leading blanks skipped).
bool is_structure(std::string_view head, bool complete) {
  std::size_t i = 0;
  while (i < head.size() && is_blank(head[i])) ++i;
  const std::string_view h = head.substr(i);
  if (h.empty()) return false;
  const char c = h[0];
  const auto next_blank = [&](std::size_t k) { return k < h.size() && is_blank(h[k]); };
  if ((c == '-' || c == '*' || c == '+') && next_blank(1)) return true;  // bullet
  if (c == '|') return true;                                             // table row
  if (c == '>') return true;                                             // block quote
  if (c == '#') {
    std::size_t k = 0;
    while (k < h.size() && h[k] == '#') ++k;
    return k < h.size() ? is_blank(h[k]) : complete;
  }
  if (c >= '0' && c <= '9') {  // numbered item: "12. " or "3) "
    std::size_t k = 0;
    while (k < h.size() && h[k] >= '0' && h[k] <= '9') ++k;
    return k < h.size() && (h[k] == '.' || h[k] == ')') && next_blank(k + 1);
  }
  // Divider or table rule: a run of three of - = * _ + |.
  if (h.size() >= 3 && std::string_view("-=*_+").find(c) != std::string_view::npos &&
      h[1] == c && h[2] == c) {
    return true;
  }
  return false;
}

bool is_fence(std::string_view head) {
  std::size_t i = 0;
  while (i < head.size() && is_blank(head[i])) ++i;
  return head.substr(i).starts_with("```") || head.substr(i).starts_with("~~~");
}

}  // namespace

void content_loop_detector::reset_tracking() {
  history_.clear();
  chunks_.clear();
  scanned_ = 0;
}

void content_loop_detector::reset() {
  reset_tracking();
  in_fence_ = false;
  kind_ = line_kind::undecided;
  line_head_.clear();
  detections_ = 0;
}

std::optional<finding> content_loop_detector::feed(std::string_view chunk,
                                                   std::size_t event_index) {
  if (history_.empty() && line_head_.empty() && kind_ == line_kind::undecided) {
    stream_start_ = event_index;
  }
  std::optional<finding> out;
  for (char c : chunk) {
    if (auto f = on_char(c, event_index); f && !out) out = f;
  }
  return out;
}

std::optional<finding> content_loop_detector::finish(std::size_t event_index) {
  std::optional<finding> out;
  if (kind_ == line_kind::undecided && !line_head_.empty()) out = decide_line(event_index);
  kind_ = line_kind::undecided;
  line_head_.clear();
  return out;
}

std::optional<finding> content_loop_detector::on_char(char c, std::size_t event_index) {
  if (c == '\n') {
    std::optional<finding> out;
    if (kind_ == line_kind::undecided) out = decide_line(event_index);
    if (kind_ == line_kind::prose) {
      auto f = append("\n", event_index);
      if (!out) out = f;
    }
    kind_ = line_kind::undecided;
    line_head_.clear();
    return out;
  }
  switch (kind_) {
    case line_kind::skip:
      return std::nullopt;
    case line_kind::prose:
      return append(std::string_view(&c, 1), event_index);
    case line_kind::undecided:
      line_head_ += c;
      if (line_head_.size() >= kHeadChars) return decide_line(event_index);
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<finding> content_loop_detector::decide_line(std::size_t event_index) {
  if (is_fence(line_head_)) {
    in_fence_ = !in_fence_;
    reset_tracking();
    kind_ = line_kind::skip;
    return std::nullopt;
  }
  if (in_fence_) {
    kind_ = line_kind::skip;
    return std::nullopt;
  }
  if (is_structure(line_head_, /*complete=*/line_head_.size() < kHeadChars)) {
    reset_tracking();
    kind_ = line_kind::skip;
    return std::nullopt;
  }
  kind_ = line_kind::prose;
  std::string head;
  head.swap(line_head_);
  return append(head, event_index);
}

std::optional<finding> content_loop_detector::append(std::string_view text,
                                                     std::size_t event_index) {
  if (history_.size() + text.size() > rule_.max_history) {
    // Keep the newer half; positions shift, so the chunk index is rebuilt.
    const std::size_t keep = rule_.max_history / 2;
    history_.erase(0, history_.size() - std::min(history_.size(), keep));
    chunks_.clear();
    scanned_ = 0;
  }
  // The index holds string_views into history_: reserve so appends never reallocate.
  if (history_.capacity() < rule_.max_history + 1) {
    const std::string copy = history_;
    chunks_.clear();
    scanned_ = 0;
    history_.reserve(rule_.max_history + 1);
    history_ = copy;
  }
  history_.append(text);
  return scan(event_index);
}

std::optional<finding> content_loop_detector::scan(std::size_t event_index) {
  const std::size_t n = rule_.chunk_size;
  while (scanned_ + n <= history_.size()) {
    const std::size_t pos = scanned_++;
    auto& where = chunks_[std::string_view(history_).substr(pos, n)];
    where.push_back(pos);
    if (where.size() < rule_.occurrences) continue;
    const std::size_t k = rule_.occurrences;
    const std::size_t first = where[where.size() - k];
    const std::size_t last = where.back();
    const double avg = static_cast<double>(last - first) / static_cast<double>(k - 1);
    if (avg > static_cast<double>(rule_.max_distance)) continue;
    // A real loop repeats a few periods; a list with a shared prefix has a different one each
    // time.
    std::set<std::string_view> periods;
    for (std::size_t i = where.size() - k; i + 1 < where.size(); ++i) {
      periods.insert(std::string_view(history_).substr(where[i], where[i + 1] - where[i]));
    }
    if (periods.size() > k / 2) continue;
    ++detections_;
    finding f;
    f.detector = detector_id::content;
    f.identity = 2;
    f.count = detections_;
    f.steps = rule_.steps;
    f.confidence = 0.9;
    f.loop_start = stream_start_;
    f.detail = std::string(std::string_view(history_).substr(pos, n));
    reset_tracking();
    (void)event_index;
    return f;
  }
  return std::nullopt;
}

}  // namespace loopguard::sdk
