#include "loopguard/fingerprint.hpp"

#include <xxhash.h>

#include <algorithm>

#include "loopguard/ascii.hpp"
#include "loopguard/result_mask.hpp"
#include "loopguard/shell_command.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard {
namespace {

std::uint64_t hash(std::string_view text, std::uint64_t seed) {
  return XXH3_64bits_withSeed(text.data(), text.size(), seed);
}

using ascii::lowercase;

key_set to_set(const std::vector<std::string>& keys) {
  return key_set(keys.begin(), keys.end());
}

}  // namespace

std::string summary_of(const call_fingerprint& call) {
  return std::string(utf8::cut(call.normalized, kCallSummaryBytes));
}

fingerprinter::fingerprinter() : fingerprinter(fingerprint_options{}) {}

fingerprinter::fingerprinter(fingerprint_options options)
    : options_(std::move(options)),
      primary_(to_set(options_.primary_keys)),
      volatile_(to_set(options_.volatile_keys)),
      result_volatile_(to_set(options_.result_volatile_keys)) {
  for (const auto& t : options_.shell_tools) shell_tools_.insert(lowercase(t));
}

bool fingerprinter::is_shell_tool(std::string_view tool) const {
  return shell_tools_.find(lowercase(tool)) != shell_tools_.end();
}

call_fingerprint fingerprinter::of_call(std::string_view tool, const nlohmann::json& args) const {
  canonical_args a = make_canonical_args(args, &volatile_);
  return finish(tool, a);
}

std::optional<call_fingerprint> fingerprinter::try_of_call_text(std::string_view tool,
                                                                std::string_view args_json) const {
  canonical_args a;
  if (!parse_canonical_args(args_json, &volatile_, a)) return std::nullopt;
  return finish(tool, a);
}

call_fingerprint fingerprinter::of_call_text(std::string_view tool,
                                             std::string_view args_json) const {
  if (auto fp = try_of_call_text(tool, args_json)) return std::move(*fp);
  // Not JSON (or beyond the limits): the text itself is the argument, so a malformed call
  // still repeats as itself.
  return of_call(tool, nlohmann::json(utf8::repair(args_json)));
}

call_fingerprint fingerprinter::finish(std::string_view raw_tool, canonical_args& args) const {
  const utf8::repaired valid_tool(raw_tool);
  const std::string_view tool = valid_tool;
  call_fingerprint fp;
  if (args.is_object && is_shell_tool(tool)) {
    for (const auto& key : options_.command_keys) {
      auto it = std::find_if(args.members.begin(), args.members.end(),
                             [&](const canonical_args::member& m) { return m.key == key; });
      if (it == args.members.end() || !it->text) continue;
      fp.is_shell = true;
      // A json built in code may hold any bytes: the command is quoted in nudges, so repair.
      const utf8::repaired command(*it->text);
      fp.shell_command = shell::normalize_whitespace(command);
      if (fp.shell_command != *it->text) {
        it->value.clear();
        append_json_string(it->value, fp.shell_command);
      }
      break;
    }
  }
  fp.canonical_args = args.canonical();
  std::string text;
  text.reserve(tool.size() + 1 + fp.canonical_args.size());
  text.append(tool).append(":").append(fp.canonical_args);
  fp.exact = hash(text, kExactSeed);

  std::optional<std::string> read_target;
  if (fp.is_shell) read_target = shell::file_read_target(fp.shell_command);
  if (read_target) {
    fp.normalized = "bash:file_read:" + *read_target;
  } else {
    fp.normalized.append(tool).append(":");
    const bool any_primary =
        args.is_object &&
        std::any_of(args.members.begin(), args.members.end(), [&](const canonical_args::member& m) {
          return primary_.find(m.key) != primary_.end();
        });
    if (any_primary) {
      fp.normalized += '{';
      bool first = true;
      for (const auto& m : args.members) {
        if (primary_.find(m.key) == primary_.end()) continue;
        if (!first) fp.normalized += ',';
        first = false;
        append_json_string(fp.normalized, m.key);
        fp.normalized += ':';
        fp.normalized += m.value;
      }
      fp.normalized += '}';
    } else {
      // No primary key at all: every argument identifies the call (else all such calls of a
      // tool would look alike).
      fp.normalized += fp.canonical_args;
    }
  }
  fp.structural = hash(fp.normalized, kStructuralSeed);
  return fp;
}

std::uint64_t fingerprinter::of_result(bool ok, std::string_view output) const {
  std::string text = ok ? "ok\n" : "error\n";
  const std::size_t first = output.find_first_not_of(" \t\r\n");
  if (!result_volatile_.empty() && first != std::string_view::npos &&
      (output[first] == '{' || output[first] == '[')) {
    // A JSON result: compared without its volatile keys (text that is not JSON, or is beyond
    // the parser's limits, is compared as it is).
    canonical_args parsed;
    if (parse_canonical_args(output, &result_volatile_, parsed)) {
      text += mask_volatile(parsed.canonical());
      return hash(text, kResultSeed);
    }
  }
  text += mask_volatile(utf8::repaired(output));
  return hash(text, kResultSeed);
}

}  // namespace loopguard
