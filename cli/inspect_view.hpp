// What `loopguard inspect` shows, read from the daemon's HTTP API answers (docs/operations.md,
// "Endpoints"). Pure: JSON text in, checked values out. The answer is hostile input like any
// other: json_input parses it (strings repaired to valid UTF-8), json_fields checks every field
// shown, and a malformed answer is an error naming the field. Fields the daemon adds later are
// ignored; `connected` is read when present.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/protocol.hpp"
#include "loopguard/status.hpp"

namespace loopguard::cli {

struct swarm_summary_view {
  std::string swarm;
  std::string daemon;  // which daemon holds it, when inspect reads several; empty: one
  // In a detail, workers and verdicts count the worker_names and the active verdicts it lists.
  std::uint64_t fingerprints = 0, workers = 0, verdicts = 0, calls = 0;
  protocol::cost spent, wasted;
  std::string unit;
  std::string budget_level = "none";
  double budget_used = 0;  // a fraction of the cap
};

struct worker_view {
  std::string name, mode;
  std::uint64_t detections = 0;
  // Per detector, detections at warn, critical, terminate.
  std::vector<std::pair<std::string, std::array<std::uint64_t, 3>>> counts;
  std::string last_detector, last_level;  // the latest detection; empty: none
};

struct fingerprint_view {
  std::string kind, fingerprint, tool, summary, level;
  std::uint64_t calls = 0, counted = 0, workers = 0;
  double first_seen = 0, last_seen = 0;
  protocol::cost wasted;
};

struct verdict_view {
  std::string tool, kind, fingerprint, level, message;
  std::uint64_t calls = 0, workers = 0;
  protocol::cost cost;
  double t = 0;
};

struct swarm_detail_view {
  swarm_summary_view summary;
  std::vector<std::string> worker_names;
  std::vector<worker_view> workers;
  std::vector<fingerprint_view> top;
  std::vector<verdict_view> verdicts;
  std::optional<std::vector<std::string>> connected;  // when the daemon says
};

// A parsed answer: the document (to print with --json) and what it holds.
template <class View>
struct parsed_answer {
  nlohmann::json document;
  View view;
};

// GET /api/swarms: {"swarms": [summary...]}.
result<parsed_answer<std::vector<swarm_summary_view>>> parse_swarm_list(std::string_view body);

// GET /api/swarms/{id}: the summary plus worker_names, workers, top, verdicts[, connected].
result<parsed_answer<swarm_detail_view>> parse_swarm_detail(std::string_view body);

// The "error" of an error answer ({"error": "..."}), empty when the body holds none.
std::string error_of(std::string_view body);

}  // namespace loopguard::cli
