#include "loopguard/json_input.hpp"

#include <fstream>
#include <sstream>

#include "loopguard/utf8.hpp"

namespace loopguard::json_input {
namespace {

constexpr bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The 16-bit value of `\uXXXX` at s[i] ('\\'), or -1 when s[i..] is not such an escape.
long escape_at(std::string_view s, std::size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    if (!is_hex(s[k])) return -1;
    const char c = s[k];
    v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

// Copies `text` into `out` lazily: nothing is copied until the first repair.
class repairer {
 public:
  repairer(std::string_view text, std::string& out) : text_(text), out_(out) { out_.clear(); }

  // Replaces text[from, to) with `with`.
  void replace(std::size_t from, std::size_t to, std::string_view with) {
    if (!copying_) {
      out_.reserve(text_.size() + 16);
      copying_ = true;
    }
    out_.append(text_.data() + done_, from - done_);
    out_.append(with);
    done_ = to;
    ++repairs_;
  }
  void finish() {
    if (copying_) out_.append(text_.data() + done_, text_.size() - done_);
  }
  std::size_t repairs() const { return repairs_; }

 private:
  std::string_view text_;
  std::string& out_;
  std::size_t done_ = 0;  // text_[0, done_) is in out_ (when copying_)
  std::size_t repairs_ = 0;
  bool copying_ = false;
};

// Scans the string literal whose opening quote is at s[i]; returns the index after it (or
// s.size() when it is not closed: the parser reports that).
std::size_t scan_string(std::string_view s, std::size_t i, repairer& r) {
  ++i;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') return i + 1;
    if (c == '\\') {
      const long v = escape_at(s, i);
      if (v >= 0xD800 && v <= 0xDBFF) {
        const long lo = escape_at(s, i + 6);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
          i += 12;  // a valid pair
        } else {
          r.replace(i, i + 6, "\\ufffd");
          i += 6;
        }
      } else if (v >= 0xDC00 && v <= 0xDFFF) {
        r.replace(i, i + 6, "\\ufffd");
        i += 6;
      } else {
        i += 2;  // any other escape: the parser judges it
      }
      continue;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    // A run of non-ASCII bytes: ASCII never belongs to a multi-byte sequence, so the run can be
    // judged alone.
    std::size_t end = i;
    while (end < s.size() && static_cast<unsigned char>(s[end]) >= 0x80) ++end;
    const std::string_view run = s.substr(i, end - i);
    if (!utf8::is_valid(run)) r.replace(i, end, utf8::repair(run));
    i = end;
  }
  return i;
}

}  // namespace

result<repaired_text> repair_text(std::string_view text) {
  if (text.size() > kMaxTextBytes) {
    return status::error("the text is " + std::to_string(text.size()) +
                         " bytes, more than the limit of " + std::to_string(kMaxTextBytes) +
                         " bytes");
  }
  repaired_text out;
  repairer r(text, out.text);
  std::size_t depth = 0;
  std::size_t i = 0;
  // nlohmann's lexer takes a NUL byte for the end of the input, which would accept anything
  // after it: JSON has no raw NUL anywhere (in a string it must be escaped), so refuse it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return status::error("not valid JSON: a NUL byte at byte " + std::to_string(nul));
  }
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      i = scan_string(text, i, r);
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        return status::error("arrays and objects are nested more than " +
                             std::to_string(kMaxDepth) + " levels deep (at byte " +
                             std::to_string(i) + ")");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    ++i;
  }
  r.finish();
  out.repairs = r.repairs();
  return out;
}

result<document> parse(std::string_view text) {
  auto repaired = repair_text(text);
  if (!repaired) return repaired.error();
  document out;
  out.repairs = repaired->repairs;
  const std::string_view input = out.repairs > 0 ? std::string_view(repaired->text) : text;
  try {
    out.value = nlohmann::json::parse(input);
  } catch (const nlohmann::json::out_of_range& e) {
    return status::error("a number is beyond a double's range: " + utf8::repair(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // The message may quote the offending bytes: keep it valid UTF-8.
    return status::error("not valid JSON: " + utf8::repair(e.what()));
  }
  return out;
}

result<document> parse_file(const std::string& path) {
  const std::string name = utf8::repair(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return status::error(name + ": cannot read the config file");
  std::ostringstream whole;
  whole << in.rdbuf();
  auto doc = parse(std::move(whole).str());
  if (!doc) return doc.error().with_context(name + ": ");
  return doc;
}

}  // namespace loopguard::json_input
