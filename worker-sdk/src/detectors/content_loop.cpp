#include <algorithm>

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

namespace {
constexpr std::uint64_t kBase = 1099511628211ULL;  // odd multiplier of the rolling hash
}  // namespace

void content_loop_detector::reset_tracking() {
  history_.clear();
  prev_.clear();
  count_.clear();
  scanned_ = 0;
  rolling_pos_ = kNoPos;
  if (++generation_ == 0) {  // wrapped: really clear once every 65535 resets
    std::fill(table_.begin(), table_.end(), slot{});
    generation_ = 1;
  }
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
  if (table_.empty()) {
    std::size_t size = 1024;
    while (size < std::size_t{rule_.max_history} + std::size_t{rule_.max_history} / 2) size *= 2;
    table_.assign(size, slot{});
    top_power_ = 1;
    for (std::uint32_t k = 1; k < rule_.chunk_size; ++k) top_power_ *= kBase;
  }
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

std::optional<finding> content_loop_detector::scan() {
  const std::size_t n = rule_.chunk_size;
  std::optional<finding> out;
  while (scanned_ + n <= history_.size()) {
    const std::size_t pos = scanned_;
    const auto byte = [&](std::size_t k) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(history_[k]));
    };
    if (rolling_pos_ != kNoPos && rolling_pos_ + 1 == pos) {
      rolling_ = (rolling_ - top_power_ * byte(pos - 1)) * kBase + byte(pos + n - 1);
    } else if (rolling_pos_ != pos) {
      rolling_ = 0;
      for (std::size_t k = 0; k < n; ++k) rolling_ = rolling_ * kBase + byte(pos + k);
    }
    rolling_pos_ = pos;
    if (pos + n < history_.size()) {
      // The next chunk's slot is a random place in the table: fetch it while this one is done.
      const std::uint64_t next = (rolling_ - top_power_ * byte(pos)) * kBase + byte(pos + n);
      __builtin_prefetch(&table_[slot_index(next)]);
    }
    auto f = index_chunk(pos);
    ++scanned_;
    if (f) {
      // Tracking restarts right after the detected chunk, with the text that follows it.
      std::string rest = history_.substr(pos + n);
      reset_tracking();
      history_ = std::move(rest);
      out = std::move(f);
    }
  }
  return out;
}

std::size_t content_loop_detector::slot_index(std::uint64_t hash) const {
  return static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15ULL) >> 20) & (table_.size() - 1);
}

// The chunk's slot: the one holding it, or an empty one now claimed for it.
content_loop_detector::slot& content_loop_detector::slot_for(std::string_view chunk) {
  const std::size_t mask = table_.size() - 1;
  const auto tag = static_cast<std::uint16_t>((rolling_ * 0x9E3779B97F4A7C15ULL) >> 48);
  for (std::size_t i = slot_index(rolling_);; i = (i + 1) & mask) {
    slot& t = table_[i];
    if (t.generation != generation_) {
      t = slot{tag, generation_, kNone};
      return t;
    }
    if (t.tag == tag && std::string_view(history_).substr(t.last, chunk.size()) == chunk) return t;
  }
}

namespace {

// A real loop repeats a few periods; a list with a shared prefix has a different one each time.
// `where`: the last k occurrences of a chunk, newest first.
bool few_periods(std::string_view history, const std::vector<std::uint32_t>& where, std::size_t k) {
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

std::optional<finding> content_loop_detector::index_chunk(std::size_t pos) {
  const std::string_view chunk = std::string_view(history_).substr(pos, rule_.chunk_size);
  slot& s = slot_for(chunk);
  const std::uint32_t before = s.last;
  prev_.push_back(before);
  count_.push_back(before == kNone ? 1 : count_[before] + 1);
  s.last = static_cast<std::uint32_t>(pos);
  const std::size_t k = rule_.occurrences;
  if (count_.back() < k) return std::nullopt;
  // The last k occurrences, newest first.
  std::vector<std::uint32_t> where;
  where.reserve(k);
  for (std::uint32_t p = s.last; p != kNone && where.size() < k; p = prev_[p]) {
    where.push_back(p);
  }
  if (where.size() < k) return std::nullopt;
  const double avg = static_cast<double>(where.front() - where.back()) / static_cast<double>(k - 1);
  if (avg > static_cast<double>(rule_.max_distance)) return std::nullopt;
  if (!few_periods(history_, where, k)) return std::nullopt;
  ++detections_;
  finding f;
  f.detector = detector_id::content;
  f.identity = identity_of(fixed_loop::repeating_text);
  f.count = detections_;
  f.steps = rule_.steps;
  f.confidence = 0.9;
  f.detail = std::string(utf8::whole_code_points(chunk));  // the chunk starts at any byte
  return f;
}

}  // namespace loopguard::sdk
