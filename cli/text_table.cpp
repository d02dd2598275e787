#include "text_table.hpp"

#include <algorithm>

#include "display_text.hpp"

namespace loopguard::cli {

text_table::text_table(std::vector<std::string> header, std::vector<align> aligns)
    : header_(std::move(header)), aligns_(std::move(aligns)) {
  aligns_.resize(header_.size(), align::left);
}

void text_table::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string text_table::render() const {
  std::vector<std::size_t> widths(header_.size());
  const auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  const auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - display_width(row[i]), ' ');
      if (i > 0) text += "  ";
      text += aligns_[i] == align::right ? pad + row[i] : row[i] + pad;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

}  // namespace loopguard::cli
