// The daemon's log (docs/operations.md, "Logs"): one event per line on standard error, as text
// (`2026-11-25T10:00:00.123+0000 warn verdict: <message> swarm=s worker=w ...`) or as one JSON
// object per line (`{"time":...,"level":"warn","event":"verdict","msg":...,"swarm":"s",...}`),
// every value valid UTF-8. Each kind of event is rate-limited (line_limiter): past the burst a
// window's lines are counted and reported as one `suppressed` line. Thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <spdlog/common.h>

#include "loopguard/status.hpp"

namespace loopguard::daemon::logs {

enum class format { text, json };

struct field {
  std::string_view key;
  std::string value;
};

// `text` or `json`; `trace`, `debug`, `info`, `warn`, `error`, `critical` or `off`.
result<format> parse_format(std::string_view name);
result<spdlog::level::level_enum> parse_level(std::string_view name);

// Installs the stderr logger with the format's pattern and the level. Before it is called,
// events go to spdlog's default logger as text.
void setup(format f, spdlog::level::level_enum level);

// One event line of kind `event` (a fixed word: verdict, refused, checkpoint_failed, ...).
void emit(spdlog::level::level_enum level, std::string_view event, std::string_view message,
          std::initializer_list<field> fields = {});

// What follows the time and level on the line: text `event: message key=value ...` (control
// characters escaped, a value with a space, quote, '=' or '\' JSON-quoted), or for JSON the
// members after "time" and "level" and the closing brace (the pattern opens the object).
std::string render(format fmt, std::string_view event, std::string_view message,
                   std::initializer_list<field> fields);

// Writes the `suppressed` lines of kinds whose window has ended; the daemon calls it every
// second so that the count of a storm that stopped is not held back forever.
void flush_suppressed();
// At exit: writes every count still held back, its window ended or not.
void flush_all_suppressed();

}  // namespace loopguard::daemon::logs
