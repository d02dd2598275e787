#include "loopguard/canonical_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

constexpr std::string_view kTooDeepMarker = "\"[nested too deep]\"";

void append_number(std::string& out, double d) {
  // 2^63: every integral double below it converts to int64_t exactly.
  static constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isfinite(d) && std::trunc(d) == d && d > -kTwo63 && d < kTwo63) {
    out += std::to_string(static_cast<std::int64_t>(d));  // also folds -0 into 0
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  out.append(buf, r.ptr);
}

void append_value(std::string& out, const nlohmann::json& v, const key_set* skip,
                  std::size_t depth) {
  using value_t = nlohmann::json::value_t;
  if ((v.is_array() || v.is_object()) && depth >= json_input::kMaxDepth) {
    // Only a document built in code can get here (parsed text is refused at this depth).
    out += kTooDeepMarker;
    return;
  }
  switch (v.type()) {
    case value_t::null:
    case value_t::discarded:
      out += "null";
      return;
    case value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case value_t::number_integer:
      out += std::to_string(v.get<std::int64_t>());
      return;
    case value_t::number_unsigned:
      out += std::to_string(v.get<std::uint64_t>());
      return;
    case value_t::number_float:
      append_number(out, v.get<double>());
      return;
    case value_t::string:
      append_json_string(out, v.get_ref<const std::string&>());
      return;
    case value_t::binary:
      out += "null";  // never produced by parsing JSON text
      return;
    case value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        append_value(out, e, skip, depth + 1);
      }
      out += ']';
      return;
    }
    case value_t::object: {
      // nlohmann::json stores objects in a std::map: iteration is already in key byte order.
      out += '{';
      bool first = true;
      for (const auto& [key, e] : v.items()) {
        if (skip != nullptr && skip->find(key) != skip->end()) continue;
        if (!first) out += ',';
        first = false;
        append_json_string(out, key);
        out += ':';
        append_value(out, e, skip, depth + 1);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  std::size_t run = 0;  // start of the pending run of characters that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Judge the whole run of non-ASCII bytes (no ASCII byte is part of a sequence).
      std::size_t end = i;
      while (end < s.size() && static_cast<unsigned char>(s[end]) >= 0x80) ++end;
      const std::string_view bytes = s.substr(i, end - i);
      if (!utf8::is_valid(bytes)) {
        out.append(s.data() + run, i - run);
        utf8::repair_append(bytes, out);
        run = end;
      }
      i = end - 1;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void append_canonical_json(std::string& out, const nlohmann::json& value, const key_set* skip) {
  append_value(out, value, skip, 0);
}

std::string canonical_json(const nlohmann::json& value, const key_set* skip) {
  std::string out;
  append_value(out, value, skip, 0);
  return out;
}

}  // namespace loopguard
