#include "service/daemon_log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/utf8.hpp"
#include "service/line_limiter.hpp"

namespace loopguard::daemon::logs {
namespace {

struct state {
  std::mutex mu;  // guards limiter
  line_limiter limiter;
  format fmt = format::text;
};

state& global() {
  static state s;
  return s;
}

// A JSON string, invalid UTF-8 replaced.
std::string json_string(std::string_view v) {
  return nlohmann::json(std::string(v))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The text of one line: valid UTF-8, control characters escaped (a hostile name holding a
// newline cannot forge a line of its own).
std::string one_line(std::string_view v) {
  std::string out;
  for (const char c : utf8::repair(v)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7F) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    }
  }
  return out;
}

// key=value; a value with a space, a quote, '=' or a control character is JSON-quoted.
void append_text_field(std::string& out, const field& f) {
  out += ' ';
  out += f.key;
  out += '=';
  const bool plain = !f.value.empty() && f.value.find_first_of(" \"=\\") == std::string::npos &&
                     std::none_of(f.value.begin(), f.value.end(),
                                  [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  out += plain ? one_line(f.value) : json_string(f.value);
}

}  // namespace

std::string render(format fmt, std::string_view event, std::string_view message,
                   std::initializer_list<field> fields) {
  std::string out;
  if (fmt == format::json) {
    out += "\"event\":" + json_string(event) + ",\"msg\":" + json_string(message);
    for (const auto& f : fields) out += "," + json_string(f.key) + ":" + json_string(f.value);
    out += '}';
    return out;
  }
  out += event;
  out += ": ";
  out += one_line(message);
  for (const auto& f : fields) append_text_field(out, f);
  return out;
}

namespace {

void write(spdlog::level::level_enum level, std::string_view event, std::string_view message,
           std::initializer_list<field> fields, format fmt) {
  spdlog::log(level, "{}", render(fmt, event, message, fields));
}

void write_suppressed(format fmt, const line_limiter::suppressed& s) {
  write(spdlog::level::warn, "suppressed",
        "held back " + std::to_string(s.lines) + " more \"" + s.kind + "\" lines in the last " +
            std::to_string(line_limiter::kWindow.count()) + " s",
        {{"kind", s.kind}, {"lines", std::to_string(s.lines)}}, fmt);
}

}  // namespace

result<format> parse_format(std::string_view name) {
  if (name == "text") return format::text;
  if (name == "json") return format::json;
  return status::error("log format: expected text or json, got \"" + utf8::repair(name) + "\"");
}

result<spdlog::level::level_enum> parse_level(std::string_view name) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},   {"critical", spdlog::level::critical},
      {"off", spdlog::level::off}};
  for (const auto& [n, l] : kLevels) {
    if (n == name) return l;
  }
  return status::error(
      "log level: expected one of trace, debug, info, warn, error, critical, off, got \"" +
      utf8::repair(name) + "\"");
}

void setup(format f, spdlog::level::level_enum level) {
  auto logger = spdlog::stderr_color_mt("loopguardd");
  spdlog::set_default_logger(logger);
  if (f == format::json) {
    // spdlog writes the time and the level; render() the rest of the object.
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l",%v)");
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  }
  spdlog::set_level(level);
  std::lock_guard lock(global().mu);
  global().fmt = f;
}

void emit(spdlog::level::level_enum level, std::string_view event, std::string_view message,
          std::initializer_list<field> fields) {
  if (!spdlog::should_log(level)) return;
  state& s = global();
  line_limiter::admission a;
  format fmt;
  {
    std::lock_guard lock(s.mu);
    a = s.limiter.admit(event, line_limiter::clock::now());
    fmt = s.fmt;
  }
  if (a.suppressed_before > 0) write_suppressed(fmt, {std::string(event), a.suppressed_before});
  if (a.write) write(level, event, message, fields, fmt);
}

void flush_suppressed() {
  state& s = global();
  std::vector<line_limiter::suppressed> held;
  format fmt;
  {
    std::lock_guard lock(s.mu);
    held = s.limiter.expire(line_limiter::clock::now());
    fmt = s.fmt;
  }
  for (const auto& h : held) write_suppressed(fmt, h);
}

void flush_all_suppressed() {
  state& s = global();
  std::vector<line_limiter::suppressed> held;
  format fmt;
  {
    std::lock_guard lock(s.mu);
    held = s.limiter.drain();
    fmt = s.fmt;
  }
  for (const auto& h : held) write_suppressed(fmt, h);
}

}  // namespace loopguard::daemon::logs
