#include "loopguard/fingerprint.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cctype>

#include "loopguard/result_mask.hpp"
#include "loopguard/shell_command.hpp"

namespace loopguard {
namespace {

std::uint64_t hash(std::string_view text, std::uint64_t seed) {
  return XXH3_64bits_withSeed(text.data(), text.size(), seed);
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

key_set to_set(const std::vector<std::string>& keys) { return key_set(keys.begin(), keys.end()); }

}  // namespace

fingerprinter::fingerprinter() : fingerprinter(fingerprint_options{}) {}

fingerprinter::fingerprinter(fingerprint_options options)
    : options_(std::move(options)),
      primary_(to_set(options_.primary_keys)),
      volatile_(to_set(options_.volatile_keys)) {
  for (const auto& t : options_.shell_tools) shell_tools_.insert(lowercase(t));
}

bool fingerprinter::is_shell_tool(std::string_view tool) const {
  return shell_tools_.find(lowercase(tool)) != shell_tools_.end();
}

call_fingerprint fingerprinter::of_call(std::string_view tool, const nlohmann::json& args) const {
  call_fingerprint fp;
  const nlohmann::json* effective = &args;
  nlohmann::json rewritten;
  if (args.is_object() && is_shell_tool(tool)) {
    for (const auto& key : options_.command_keys) {
      auto it = args.find(key);
      if (it == args.end() || !it->is_string()) continue;
      fp.is_shell = true;
      fp.shell_command = shell::normalize_whitespace(it->get_ref<const std::string&>());
      if (fp.shell_command != it->get_ref<const std::string&>()) {
        rewritten = args;
        rewritten[key] = fp.shell_command;
        effective = &rewritten;
      }
      break;
    }
  }

  append_canonical_json(fp.canonical_args, *effective, &volatile_);
  std::string exact_text;
  exact_text.reserve(tool.size() + 1 + fp.canonical_args.size());
  exact_text.append(tool).append(":").append(fp.canonical_args);
  fp.exact = hash(exact_text, kExactSeed);

  std::optional<std::string> read_target;
  if (fp.is_shell) read_target = shell::file_read_target(fp.shell_command);
  if (read_target) {
    fp.normalized = "bash:file_read:" + *read_target;
  } else {
    fp.normalized.append(tool).append(":");
    if (effective->is_object()) {
      nlohmann::json primary = nlohmann::json::object();
      for (const auto& [key, value] : effective->items()) {
        if (primary_.find(key) != primary_.end() && volatile_.find(key) == volatile_.end()) {
          primary[key] = value;
        }
      }
      append_canonical_json(fp.normalized, primary, &volatile_);
    } else {
      fp.normalized += fp.canonical_args;
    }
  }
  fp.structural = hash(fp.normalized, kStructuralSeed);
  return fp;
}

call_fingerprint fingerprinter::of_call_text(std::string_view tool,
                                             std::string_view args_json) const {
  return of_call(tool, nlohmann::json::parse(args_json));
}

std::uint64_t fingerprinter::of_result(bool ok, std::string_view output) const {
  std::string text = ok ? "ok\n" : "error\n";
  text += mask_volatile(output);
  return hash(text, kResultSeed);
}

}  // namespace loopguard
