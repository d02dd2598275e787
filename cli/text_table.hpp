// An aligned plain-text table for a terminal: each column as wide as its widest cell (by
// display width), two spaces between columns, no trailing spaces.
//
//   text_table t({"SWARM", "CALLS"}, {align::left, align::right});
//   t.add_row({"s1", "12"});
//   std::cout << t.render();
//
// Cells are printed as given: callers make them fit (display_text.hpp) first.
#pragma once

#include <string>
#include <vector>

namespace loopguard::cli {

enum class align { left, right };

class text_table {
 public:
  // `aligns` may be shorter than `header`: the other columns align left.
  explicit text_table(std::vector<std::string> header, std::vector<align> aligns = {});

  // A row with fewer cells than the header is padded with empty cells; extra cells are dropped.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  // The header, then every row, each line ending in '\n'.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace loopguard::cli
