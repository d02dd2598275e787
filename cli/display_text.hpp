// Text for a terminal: how many columns a string takes, and a string made fit to a column.
// Pure functions over valid UTF-8 (json_input and utf8::repair give nothing else).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loopguard::cli {

// Columns `s` takes on a terminal: 1 per code point, 2 for East Asian wide and fullwidth
// characters and emoji, 0 for combining marks, zero-width characters and variation selectors.
// An approximation of wcwidth() that needs no locale; exact for ASCII.
std::size_t display_width(std::string_view s);

// `s` as one cell of at most `max_width` columns: control characters (newlines, tabs, escape
// sequences that could redraw the terminal) become spaces, and a longer text is cut at a
// code-point boundary and ends with "…".
std::string fit(std::string_view s, std::size_t max_width);

}  // namespace loopguard::cli
