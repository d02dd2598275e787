// `loopguard eval`'s report (docs/eval.md): pure functions from what replay found in each
// recording to the agreement table, the disagreements and the rates of unlabelled recordings.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/severity.hpp"
#include "loopguard/trace.hpp"

namespace loopguard::cli {

// The first detection the label counts (or, unlabelled, the first of all).
struct first_seen {
  std::size_t event = 0;
  std::string detector, tool;
  severity level = severity::warn;
};

// One recording, replayed.
struct eval_trace {
  std::string file;    // as printed
  std::string source;  // meta.agent, else from the file name (source_of)
  std::optional<trace_expect> label;
  std::optional<first_seen> first;
  std::string disagreement;                       // empty: agrees (labelled only)
  std::size_t tool_calls = 0;                     // tool_call events
  std::map<std::string, std::size_t> detections;  // lines of warn and above, by detector
};

// meta.agent when set; else `<agent>` of a file named `real-<agent>-...`; else the name of the
// directory holding the file ("." for none).
std::string source_of(const std::string& path, const std::string& agent);

struct eval_totals {
  std::size_t loops = 0, caught = 0, missed = 0, healthy = 0, false_alarms = 0;
  std::vector<long long> delays;  // first counted detection - within, for caught loops with one
  std::optional<double> precision() const;
  std::optional<double> recall() const;
  std::optional<double> median_delay() const;
  std::optional<long long> worst_delay() const;  // the latest
};

struct eval_report {
  std::string preset;
  std::vector<eval_trace> traces;  // as given
  eval_totals all;
  std::map<std::string, eval_totals> by_source;
  // Per detector: loops it caught first, false alarms it raised first.
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_detector;
  std::vector<std::string> errors;  // files that could not be read: "FILE:LINE: ..."

  std::size_t disagreements() const;
};

eval_report make_report(std::string preset, std::vector<eval_trace> traces,
                        std::vector<std::string> errors);

// Aligned text tables, then the disagreements, then the unlabelled rates.
std::string to_text(const eval_report& r);
nlohmann::ordered_json to_json(const eval_report& r);

}  // namespace loopguard::cli
