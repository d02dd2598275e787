// `intent`: one reply that keeps announcing what the agent will do instead of doing it: the same
// line (or a near copy) again and again at its end, an intent phrase ("let me") over and over,
// or a one-word line repeated (docs/detectors.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "finding.hpp"
#include "loopguard/config.hpp"

namespace loopguard::sdk {

// A line as the rule compares it: blanks trimmed, ASCII lower case, runs of blanks as one space,
// trailing `.`, `!` and `…` dropped.
std::string normalize_intent_line(std::string_view line);

// Whole-word, case-insensitive occurrences of `phrase` in `text`.
std::uint32_t count_phrase(std::string_view text, std::string_view phrase);

// The last non-empty line and the lines right before it that repeat it (equal, or a near copy:
// one a prefix of the other covering 70 % of it, or the same first six words making 16 bytes or
// more); 0 when the last line is shorter than 8 bytes.
std::uint32_t trailing_repeated_lines(std::string_view text);

// The last non-empty line when it is one short word (a letter, then up to 24 letters, digits,
// `_` or `-`, and an optional `.` or `!`), and the lines right before it that are the same
// word; 0 otherwise.
std::uint32_t trailing_token_lines(std::string_view text);

// What the three measures say about one reply's text so far. `streaming`: the reply is not
// finished yet, and only a critical level is reported (the stream can still turn into work).
std::optional<finding> check_intent(std::string_view text, const intent_rule& rule, bool streaming);

}  // namespace loopguard::sdk
