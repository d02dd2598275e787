// The recorded-run format (docs/trace-format.md): one JSON object per line.
//
// Parsing is strict about the fields the format defines (a missing or mistyped field, an unknown
// kind, a line that is not JSON are errors naming the line) and ignores every other field;
// fields are read with json_fields.hpp (10.0 is an integer).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/protocol.hpp"
#include "loopguard/status.hpp"

namespace loopguard {

// user (v1.1): a message from outside the agent; resume (v1.2): the run resumes after a pause.
enum class event_kind { tool_call, tool_result, text, user, resume };

std::string_view to_string(event_kind k);

struct trace_event {
  event_kind kind = event_kind::text;
  std::string worker = "w0";
  std::string swarm = "default";
  std::optional<double> t;  // seconds since the run started
  std::string tool;         // tool_call, tool_result
  nlohmann::json args;      // tool_call: an object
  std::string id;           // tool_call, tool_result: optional call id
  std::string peer;         // tool_call (v1.3): the worker the call hands work to
  bool ok = true;           // tool_result
  std::string output;       // tool_result
  protocol::cost cost;      // tool_result (v1.3): what the call cost, as reported
  std::string content;      // text, user (optional for user)
  std::size_t line = 0;     // 1-based line number in the file
};

struct trace_expect {
  bool loop = false;
  std::optional<std::size_t> within;  // only with loop == true
  std::string detector;               // empty: any detector
};

struct trace_meta {
  std::string name;
  std::string source;
  std::string
      agent;  // optional: the agent framework that made the run (loopguard eval groups by it)
  std::optional<trace_expect> expect;
};

struct trace {
  std::optional<trace_meta> meta;  // the first meta line, if any
  std::vector<trace_event> events;
};

// What one line holds: an event, a meta line, or neither (a blank line).
struct trace_line {
  std::optional<trace_event> event;
  std::optional<trace_meta> meta;
};

// One line (`line_no` is stored in the event). The error names the field, with
// json_fields.hpp's wording (`tool: expected a string, got nothing`), not the line.
result<trace_line> parse_trace_line(std::string_view line, std::size_t line_no);

// A whole recording; stops at the first bad line. The error starts with the line's number
// (`3: not valid JSON: ...`).
result<trace> read_trace(std::istream& in);

// Pairs results with their calls: by id when the result has one, else with the oldest
// unanswered call of the same tool by the same worker (and swarm).
class call_pairing {
 public:
  void on_call(const trace_event& call, std::size_t event_index);
  // The index of the call this result answers, or nullopt when there is none.
  std::optional<std::size_t> on_result(const trace_event& result);

 private:
  struct pending {
    std::string swarm, worker, tool, id;
    std::size_t index;
  };
  std::vector<pending> pending_;
};

}  // namespace loopguard
