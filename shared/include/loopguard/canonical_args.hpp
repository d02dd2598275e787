// Tool-call arguments in canonical form (canonical_json.hpp's rules), straight from JSON text
// without building a document: the fingerprint hot path. The top-level members of an object are
// kept apart (sorted by key, volatile keys left out) so the structural fingerprint can pick the
// primary keys and a shell tool's command line can be normalized.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/canonical_json.hpp"

namespace loopguard {

struct canonical_args {
  struct member {
    std::string key;
    std::string value;                // canonical JSON of the value
    std::optional<std::string> text;  // the decoded string, when the value is a string
  };
  bool is_object = false;
  std::vector<member> members;  // is_object: sorted by key, skip keys left out
  std::string whole;            // !is_object: the canonical JSON of the whole value

  // The canonical JSON of everything: `whole`, or the members joined into an object.
  std::string canonical() const;
};

// Parses JSON text under json_input.hpp's rules: invalid UTF-8 and lone surrogate escapes in
// strings become U+FFFD, nesting deeper than json_input::kMaxDepth, numbers beyond a double's
// range, texts longer than json_input::kMaxTextBytes and NUL bytes are refused. False (and `out`
// unspecified) for anything else that is not exactly one JSON value (RFC 8259): the same inputs
// json_input::parse rejects. Duplicate keys: the last one wins, as in nlohmann::json.
bool parse_canonical_args(std::string_view text, const key_set* skip, canonical_args& out);

// The same from a parsed document.
canonical_args make_canonical_args(const nlohmann::json& value, const key_set* skip);

}  // namespace loopguard
