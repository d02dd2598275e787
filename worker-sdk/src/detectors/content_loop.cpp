#include <algorithm>
#include <span>

#include "content_loop.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::sdk {
namespace {

// How many characters of a line decide its kind (enough for "```", "| ", "12. ", "### ").
constexpr std::size_t kHeadChars = 8;

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

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
  if (h.size() >= 3 && std::string_view("-=*_+").find(c) != std::string_view::npos && h[1] == c &&
      h[2] == c) {
    return true;
  }
  // A line drawn with box-drawing characters (U+2500..U+257F: E2 94 80 .. E2 95 BF), two of
  // them to start it: a frame or a divider.
  const auto box = [&](std::size_t k) {
    return k + 2 < h.size() && h[k] == '\xE2' && (h[k + 1] == '\x94' || h[k + 1] == '\x95');
  };
  return h.size() >= 6 && box(0) && box(3);
}

bool is_fence(std::string_view head) {
  std::size_t i = 0;
  while (i < head.size() && is_blank(head[i])) ++i;
  return head.substr(i).starts_with("```") || head.substr(i).starts_with("~~~");
}

}  // namespace

void content_loop_detector::reset_tracking() {
  history_.clear();
  index_.clear();
}

void content_loop_detector::reset() {
  reset_tracking();
  in_fence_ = false;
  ticks_ = 0;
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
  const auto keep = [&](std::optional<finding> f) {
    if (f && !out) out = std::move(f);
  };
  std::size_t i = 0;
  while (i < chunk.size()) {
    const std::size_t nl = chunk.find('\n', i);
    const std::size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    // The rest of the current line, up to (not including) its newline.
    std::string_view part = chunk.substr(i, end - i);
    while (!part.empty()) {
      if (kind_ == line_kind::undecided) {
        const std::size_t take = std::min(part.size(), kHeadChars - line_head_.size());
        line_head_.append(part.substr(0, take));
        part.remove_prefix(take);
        if (line_head_.size() >= kHeadChars) keep(decide_line(event_index));
      } else {
        keep(consume(part, event_index));
        part = {};
      }
    }
    if (nl == std::string_view::npos) break;
    // The line ends here.
    if (kind_ == line_kind::undecided) keep(decide_line(event_index));
    if (kind_ == line_kind::prose) keep(append("\n", event_index));
    kind_ = line_kind::undecided;
    line_head_.clear();
    ticks_ = 0;
    i = nl + 1;
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

void content_loop_detector::toggle_fence() {
  in_fence_ = !in_fence_;
  reset_tracking();
}

// The rest of a line whose kind is known: prose is tracked, and three backticks in a row open
// or close a code block wherever they are (a run may continue from the previous piece).
std::optional<finding> content_loop_detector::consume(std::string_view part,
                                                      std::size_t event_index) {
  std::optional<finding> out;
  const auto track = [&](std::string_view text) {
    if (kind_ != line_kind::prose) return;
    if (auto f = append(text, event_index)) out = std::move(f);
  };
  while (!part.empty()) {
    const std::size_t k = ticks_ > 0 ? 0 : part.find('`');
    if (k == std::string_view::npos) {
      track(part);
      break;
    }
    std::size_t j = k;
    while (j < part.size() && part[j] == '`' && ticks_ < 3) {
      ++ticks_;
      ++j;
    }
    track(part.substr(0, j));
    part.remove_prefix(j);
    if (ticks_ == 3) {
      ticks_ = 0;
      toggle_fence();
      kind_ = in_fence_ ? line_kind::skip : line_kind::prose;
    } else if (!part.empty()) {
      ticks_ = 0;  // one or two backticks: inline code, ordinary text
    }
  }
  return out;
}

std::optional<finding> content_loop_detector::decide_line(std::size_t event_index) {
  std::string head;
  head.swap(line_head_);
  if (is_fence(head)) {
    // A fence line: its marker opens or closes the block; after an opening ``` comes the info
    // string (skipped), after a closing one the line is text again.
    const std::size_t marker = head.find_first_not_of(" \t");
    toggle_fence();
    kind_ = in_fence_ || head[marker] == '~' ? line_kind::skip : line_kind::prose;
    return consume(std::string_view(head).substr(marker + 3), event_index);
  }
  if (in_fence_) {
    kind_ = line_kind::skip;
  } else if (is_structure(head, /*complete=*/head.size() < kHeadChars)) {
    reset_tracking();
    kind_ = line_kind::skip;
  } else {
    kind_ = line_kind::prose;
  }
  return consume(head, event_index);
}

std::optional<finding> content_loop_detector::append(std::string_view text,
                                                     std::size_t event_index) {
  // Everything below happens at positions fixed by the text alone (the history is trimmed when
  // it is exactly full, tracking restarts right after a detected chunk), so the outcome never
  // depends on how the stream was cut into pieces.
  std::optional<finding> out;
  while (!text.empty()) {
    if (history_.size() >= rule_.max_history) {
      // Keep the newer half; positions shift, so the index is rebuilt from it.
      std::string tail = history_.substr(history_.size() - rule_.max_history / 2);
      reset_tracking();
      history_ = std::move(tail);
    }
    const std::size_t take = std::min(text.size(), rule_.max_history - history_.size());
    history_.append(text.substr(0, take));
    text.remove_prefix(take);
    if (auto f = scan()) {
      f->loop_start = stream_start_;
      out = std::move(f);  // the newest detection carries the stream's count
    }
  }
  (void)event_index;
  return out;
}

namespace {

// A real loop repeats a few periods; a list with a shared prefix has a different one each time.
// `where`: the last k occurrences of a chunk, newest first.
bool few_periods(std::string_view history, std::span<const std::uint32_t> where, std::size_t k) {
  std::vector<std::string_view> periods;
  for (std::size_t j = where.size() - 1; j > 0; --j) {
    const std::string_view period = history.substr(where[j], where[j - 1] - where[j]);
    if (std::find(periods.begin(), periods.end(), period) == periods.end()) {
      periods.push_back(period);
    }
  }
  return periods.size() <= k / 2;
}

}  // namespace

// Every chunk at every offset, in order, through the index; the first one seen `occurrences`
// times close together, with few periods, is a loop.
std::optional<finding> content_loop_detector::scan() {
  std::optional<finding> out;
  for (auto where = index_.advance(history_); !where.empty(); where = index_.advance(history_)) {
    const std::size_t k = rule_.occurrences;
    if (!few_periods(history_, where, k)) continue;
    const std::size_t pos = where.front();
    const std::string_view chunk = std::string_view(history_).substr(pos, rule_.chunk_size);
    ++detections_;
    finding f;
    f.detector = detector_id::content;
    f.identity = identity_of(fixed_loop::repeating_text);
    f.count = detections_;
    f.steps = rule_.steps;
    f.confidence = 0.9;
    f.detail = std::string(utf8::whole_code_points(chunk));  // the chunk starts at any byte
    // Tracking restarts right after the detected chunk, with the text that follows it.
    std::string rest = history_.substr(pos + rule_.chunk_size);
    reset_tracking();
    history_ = std::move(rest);
    out = std::move(f);
  }
  return out;
}

}  // namespace loopguard::sdk
