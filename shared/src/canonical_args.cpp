#include "loopguard/canonical_args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

// Nesting deeper than this is refused rather than risking the stack (json_input's limit).
constexpr std::size_t kMaxDepth = json_input::kMaxDepth;

// Appends `{"key":value,...}` for members already in canonical order.
void append_members(std::string& out, const std::vector<canonical_args::member>& members) {
  out += '{';
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i > 0) out += ',';
    append_json_string(out, members[i].key);
    out += ':';
    out += members[i].value;
  }
  out += '}';
}

struct member_less {
  bool operator()(const canonical_args::member& a, const canonical_args::member& b) const {
    return a.key < b.key;
  }
};

// A recursive-descent JSON parser that writes the canonical form as it goes.
class parser {
 public:
  explicit parser(std::string_view s) : s_(s) {}

  bool document(const key_set* skip, canonical_args& out) {
    if (s_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // a leading byte order mark, as nlohmann
    ws();
    if (peek() == '{') {
      out.is_object = true;
      if (!object_members(skip, out.members, 0)) return false;
    } else {
      out.is_object = false;
      if (!value(out.whole, skip, 0, nullptr)) return false;
    }
    ws();
    return pos_ == s_.size();
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // Members of an object at pos_ ('{'), sorted, duplicates resolved, skip keys dropped.
  // `depth`: containers around this one.
  bool object_members(const key_set* skip, std::vector<canonical_args::member>& members,
                      std::size_t depth) {
    if (depth >= kMaxDepth) return false;
    ++pos_;  // '{'
    ws();
    if (peek() == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      ws();
      canonical_args::member m;
      if (peek() != '"' || !string_text(m.key)) return false;
      ws();
      if (peek() != ':') return false;
      ++pos_;
      ws();
      std::string text;
      const bool is_string = peek() == '"';
      if (!value(m.value, skip, depth + 1, is_string ? &text : nullptr)) return false;
      if (is_string) m.text = std::move(text);
      if (skip == nullptr || skip->find(m.key) == skip->end()) members.push_back(std::move(m));
      ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') return false;
      ++pos_;
      break;
    }
    // Stable sort keeps duplicates in document order; the last of each key wins.
    std::stable_sort(members.begin(), members.end(), member_less{});
    std::vector<canonical_args::member> unique;
    unique.reserve(members.size());
    for (auto& m : members) {
      if (!unique.empty() && unique.back().key == m.key) {
        unique.back() = std::move(m);
      } else {
        unique.push_back(std::move(m));
      }
    }
    members.swap(unique);
    return true;
  }

  bool value(std::string& out, const key_set* skip, std::size_t depth, std::string* text) {
    switch (peek()) {
      case '{': {
        std::vector<canonical_args::member> members;
        if (!object_members(skip, members, depth)) return false;
        append_members(out, members);
        return true;
      }
      case '[': {
        if (depth >= kMaxDepth) return false;
        ++pos_;
        out += '[';
        ws();
        if (peek() == ']') {
          ++pos_;
          out += ']';
          return true;
        }
        while (true) {
          ws();
          if (!value(out, skip, depth + 1, nullptr)) return false;
          ws();
          if (peek() == ',') {
            ++pos_;
            out += ',';
            continue;
          }
          if (peek() != ']') return false;
          ++pos_;
          out += ']';
          return true;
        }
      }
      case '"': {
        std::string decoded;
        if (!string_text(decoded)) return false;
        append_json_string(out, decoded);
        if (text != nullptr) *text = std::move(decoded);
        return true;
      }
      case 't':
        if (!literal("true")) return false;
        out += "true";
        return true;
      case 'f':
        if (!literal("false")) return false;
        out += "false";
        return true;
      case 'n':
        if (!literal("null")) return false;
        out += "null";
        return true;
      default:
        return number(out);
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool number(std::string& out) {
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digit(peek())) {
      while (digit(peek())) ++pos_;
    } else {
      return false;
    }
    bool integral = true;
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!digit(peek())) return false;
      while (digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digit(peek())) return false;
      while (digit(peek())) ++pos_;
    }
    const std::string_view lit = s_.substr(start, pos_ - start);
    if (integral) {
      // As nlohmann::json: an integer that fits 64 bits (signed, or unsigned when positive)
      // stays an integer; a larger one becomes a double.
      if (lit[0] == '-') {
        std::int64_t v;
        auto r = std::from_chars(lit.data(), lit.data() + lit.size(), v);
        if (r.ec == std::errc() && r.ptr == lit.data() + lit.size()) {
          out += std::to_string(v);  // "-0" -> "0"
          return true;
        }
      } else {
        std::uint64_t v;
        auto r = std::from_chars(lit.data(), lit.data() + lit.size(), v);
        if (r.ec == std::errc() && r.ptr == lit.data() + lit.size()) {
          out += std::to_string(v);
          return true;
        }
      }
    }
    double d;
    auto r = std::from_chars(lit.data(), lit.data() + lit.size(), d);
    if (r.ec == std::errc::result_out_of_range) {
      // As nlohmann (strtod): too large is refused, too small rounds to 0 or a subnormal.
      d = std::strtod(std::string(lit).c_str(), nullptr);
      if (!std::isfinite(d)) return false;
    } else if (r.ec != std::errc() || r.ptr != lit.data() + lit.size()) {
      return false;
    }
    append_canonical_json(out, nlohmann::json(d));
    return true;
  }

  static void put_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(std::uint32_t& v) {
    if (pos_ + 4 > s_.size()) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    return true;
  }

  // A string literal at pos_ ('"'), decoded.
  bool string_text(std::string& out) {
    ++pos_;  // '"'
    while (true) {
      // Copy a run of plain ASCII at once.
      std::size_t run = pos_;
      while (run < s_.size()) {
        const auto c = static_cast<unsigned char>(s_[run]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++run;
      }
      out.append(s_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= s_.size()) return false;
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        // A run of non-ASCII bytes, repaired as json_input does.
        std::size_t end = pos_;
        while (end < s_.size() && static_cast<unsigned char>(s_[end]) >= 0x80) ++end;
        utf8::repair_append(s_.substr(pos_, end - pos_), out);
        pos_ = end;
        continue;
      }
      ++pos_;  // '\\'
      if (!escape(out)) return false;
    }
  }

  // The escape after a backslash (pos_ is past the backslash), appended to out decoded.
  bool escape(std::string& out) {
    if (pos_ >= s_.size()) return false;
    const char e = s_[pos_++];
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        return true;
      case 'b':
        out += '\b';
        return true;
      case 'f':
        out += '\f';
        return true;
      case 'n':
        out += '\n';
        return true;
      case 'r':
        out += '\r';
        return true;
      case 't':
        out += '\t';
        return true;
      case 'u':
        return unicode_escape(out);
      default:
        return false;
    }
  }

  // \uXXXX (pos_ at the first hex digit). A high surrogate pairs with a following low surrogate
  // escape; a lone surrogate becomes U+FFFD (json_input's rule).
  bool unicode_escape(std::string& out) {
    std::uint32_t cp;
    if (!hex4(cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      std::uint32_t lo = 0;
      const std::size_t at = pos_;
      if (literal("\\u") && hex4(lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else {
        pos_ = at;
        cp = utf8::replacement_character;
      }
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      cp = utf8::replacement_character;
    }
    put_utf8(out, cp);
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string canonical_args::canonical() const {
  if (!is_object) return whole;
  std::size_t size = 2;
  for (const auto& m : members) size += m.key.size() + m.value.size() + 4;
  std::string out;
  out.reserve(size);
  append_members(out, members);
  return out;
}

bool parse_canonical_args(std::string_view text, const key_set* skip, canonical_args& out) {
  out = canonical_args{};
  if (text.size() > json_input::kMaxTextBytes) return false;
  parser p(text);
  return p.document(skip, out);
}

canonical_args make_canonical_args(const nlohmann::json& value, const key_set* skip) {
  canonical_args out;
  if (!value.is_object()) {
    out.whole = canonical_json(value, skip);
    return out;
  }
  out.is_object = true;
  for (const auto& [key, v] : value.items()) {  // std::map: already sorted, no duplicates
    if (skip != nullptr && skip->find(key) != skip->end()) continue;
    canonical_args::member m;
    m.key = key;
    append_canonical_json(m.value, v, skip);
    if (v.is_string()) m.text = v.get<std::string>();
    out.members.push_back(std::move(m));
  }
  return out;
}

}  // namespace loopguard
