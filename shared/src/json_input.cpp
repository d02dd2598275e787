#include "loopguard/json_input.hpp"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

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

// Builds the document as nlohmann's json_sax_dom_parser does (the same lexer and parser, the
// same work per value), but stops at a key its object already holds. A parse error is thrown
// with its own type, as nlohmann::json::parse throws it.
class unique_keys_builder {
 public:
  using json = nlohmann::json;
  explicit unique_keys_builder(json& root) : root_(root) {}

  bool null() { return put(nullptr) != nullptr; }
  bool boolean(bool v) { return put(v) != nullptr; }
  bool number_integer(json::number_integer_t v) { return put(v) != nullptr; }
  bool number_unsigned(json::number_unsigned_t v) { return put(v) != nullptr; }
  bool number_float(json::number_float_t v, const json::string_t&) { return put(v) != nullptr; }
  bool string(json::string_t& v) { return put(std::move(v)) != nullptr; }
  bool binary(json::binary_t&) { return false; }  // JSON text has none
  bool start_object(std::size_t) {
    stack_.push_back(put(json::value_t::object));
    return true;
  }
  bool key(json::string_t& k) {
    auto& object = stack_.back()->get_ref<json::object_t&>();
    auto [it, inserted] = object.try_emplace(std::move(k));  // k is left alone when present
    if (!inserted) {
      duplicate_ = std::move(k);
      return false;
    }
    slot_ = &it->second;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    stack_.push_back(put(json::value_t::array));
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;  // NOLINT(cert-err09-cpp,cert-err61-cpp): nlohmann's own exception, caught in parse
  }

  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  // Places a new value where the parser is: the root, the end of the open array, or the slot of
  // the key just read.
  template <class V>
  json* put(V&& v) {
    if (stack_.empty()) {
      root_ = json(std::forward<V>(v));
      return &root_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      auto& array = top.get_ref<json::array_t&>();
      array.emplace_back(std::forward<V>(v));
      return &array.back();
    }
    *slot_ = json(std::forward<V>(v));
    return slot_;
  }

  json& root_;
  std::vector<json*> stack_;  // the open arrays and objects
  json* slot_ = nullptr;      // the value of the key just read
  std::optional<std::string> duplicate_;
};

constexpr std::size_t kMaxKeyShown = 64;

status duplicate_key(std::string_view key) {
  std::string shown = dump(nlohmann::json(std::string(utf8::cut(key, kMaxKeyShown))));
  if (key.size() > kMaxKeyShown) {
    shown += " (the first " + std::to_string(utf8::cut(key, kMaxKeyShown).size()) + " of " +
             std::to_string(key.size()) + " bytes)";
  }
  return status::error(kDuplicateKey, "duplicate key " + shown);
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

result<document> parse(std::string_view text, keys duplicates) {
  auto repaired = repair_text(text);
  if (!repaired) return repaired.error();
  document out;
  out.repairs = repaired->repairs;
  const std::string_view input = out.repairs > 0 ? std::string_view(repaired->text) : text;
  try {
    if (duplicates == keys::last_wins) {
      out.value = nlohmann::json::parse(input);
    } else {
      unique_keys_builder builder(out.value);
      if (!nlohmann::json::sax_parse(input, &builder)) {
        // Only the builder's key() stops the parse without throwing.
        return duplicate_key(builder.duplicate().value_or(std::string()));
      }
    }
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
  auto doc = parse(std::move(whole).str(), keys::unique);
  if (!doc) return doc.error().with_context(name + ": ");
  return doc;
}

}  // namespace loopguard::json_input
