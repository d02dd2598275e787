// Canonical JSON: one spelling for every JSON value, so that key order, formatting and number
// spelling never change a fingerprint.
//
// Rules (docs/detectors.md, "Canonical JSON"):
//  - object keys sorted by their UTF-8 bytes, at every depth; no insignificant whitespace;
//  - a number that is integral and fits in 64 bits is written as an integer (1, 1.0, 1e0 and
//    1.00 are all `1`; -0 is `0`); any other number in the shortest form that round-trips;
//  - strings escape only `"`, `\` and control characters (\b \f \n \r \t, else \u00XX);
//    everything else is written as raw UTF-8, with invalid sequences repaired to U+FFFD
//    (utf8::repair), so the output is always valid UTF-8;
//  - an array or object nested deeper than json_input::kMaxDepth is written as the string
//    "[nested too deep]" (only documents built in code get there: parsing refuses them);
//  - keys named in `skip_keys` are left out of every object, at every depth (volatile fields).
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace loopguard {

using key_set = std::unordered_set<std::string, std::hash<std::string>, std::equal_to<>>;

std::string canonical_json(const nlohmann::json& value, const key_set* skip_keys = nullptr);

// Appends the canonical form of `value` to `out`.
void append_canonical_json(std::string& out, const nlohmann::json& value,
                           const key_set* skip_keys = nullptr);

// Appends `s` as a JSON string literal (with quotes) under the rules above.
void append_json_string(std::string& out, std::string_view s);

}  // namespace loopguard
