// JSON text from outside (trace files, config files, protocol frames, tool arguments) read under
// one policy (docs/operations.md, "Hostile input"):
//  - inside string literals, invalid UTF-8 and \u escapes of unpaired surrogates (as Python's
//    json module writes for undecodable bytes) become U+FFFD: the same repair rule as
//    utf8::repair, so the same bytes always give the same strings;
//  - arrays and objects nested more than kMaxDepth deep are refused (recursive consumers stay
//    far from the stack's end);
//  - numbers beyond a double's range are refused (nlohmann's number overflow); numbers below its
//    smallest magnitude read as 0, as strtod rounds them;
//  - a raw NUL byte is refused anywhere (JSON has none; nlohmann would stop reading at it); a
//    leading UTF-8 byte order mark is skipped;
//  - a key repeated in one object: nlohmann keeps the last one; parse(text, keys::unique)
//    refuses it (protocol frames, config files), so no reader sees a value other than the one a
//    check saw.
// Never throws: nlohmann's exceptions are caught here and become the error text.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loopguard/status.hpp"

namespace loopguard::json_input {

// Nesting of arrays and objects: a document with this many nested containers is accepted, one
// more is refused.
inline constexpr std::size_t kMaxDepth = 128;
// Length of one JSON text (a trace line, a config file, tool arguments): longer is refused.
inline constexpr std::size_t kMaxTextBytes = std::size_t{64} << 20;

struct document {
  nlohmann::json value;
  std::size_t repairs = 0;  // invalid sequences and lone surrogates replaced by U+FFFD
};

// What a key repeated in one object (at any depth) does: `last_wins` keeps the last value, as
// nlohmann and most JSON readers do; `unique` refuses the text with `duplicate key "K"` (the key
// as a JSON string, repaired, cut at 64 bytes) and the code kDuplicateKey.
enum class keys { last_wins, unique };
inline constexpr std::string_view kDuplicateKey = "duplicate_key";

// Parses exactly one JSON value; on failure, what was wrong, in valid UTF-8 (nlohmann's message
// with its line and column, the depth, size or number limit, a NUL byte, a duplicate key).
result<document> parse(std::string_view text, keys duplicates = keys::last_wins);

// Reads the file at `path` whole and parses it (a config file), refusing duplicate keys. Every
// error starts with `path: ` (`PATH: cannot read the config file`, `PATH: not valid JSON: ...`,
// `PATH: duplicate key "threshold"`).
result<document> parse_file(const std::string& path);

// The repair rule applied to the string literals of JSON text, and the size, NUL and depth
// checks, without parsing. `text` is empty when nothing needed repair (then the input is the
// text to parse).
struct repaired_text {
  std::string text;
  std::size_t repairs = 0;
};
result<repaired_text> repair_text(std::string_view text);

// Serializes for output: like dump(), but a string that somehow holds invalid UTF-8 is written
// with U+FFFD instead of throwing. Everything we emit as JSON goes through this.
// (A template so nlohmann::ordered_json keeps its order.)
template <class Json>
std::string dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace loopguard::json_input
