// `loopguard fingerprint FILE...`: the fingerprints of every tool call and tool result.
#include <iostream>

#include "commands.hpp"
#include "loopguard/canonical_json.hpp"
#include "loopguard/fingerprint.hpp"
#include "loopguard/hex.hpp"
#include "loopguard/utf8.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

void print_line(const std::string& file, std::size_t index, const trace_event& ev,
                const call_fingerprint* call, const std::uint64_t* result) {
  std::string out = "{\"trace\":";
  append_json_string(out, file);
  out += ",\"event\":" + std::to_string(index) + ",\"line\":" + std::to_string(ev.line);
  out += ",\"kind\":";
  append_json_string(out, to_string(ev.kind));
  out += ",\"worker\":";
  append_json_string(out, ev.worker);
  out += ",\"swarm\":";
  append_json_string(out, ev.swarm);
  out += ",\"tool\":";
  append_json_string(out, ev.tool);
  if (call != nullptr) {
    out += ",\"exact\":\"" + to_hex(call->exact) + "\",\"structural\":\"" +
           to_hex(call->structural) + "\",\"normalized\":";
    append_json_string(out, call->normalized);
  } else {
    out += ",\"exact\":null,\"structural\":null,\"normalized\":null";
  }
  if (result != nullptr) out += ",\"result\":\"" + to_hex(*result) + "\"";
  out += "}\n";
  std::cout << out;
}

int run_fingerprint(const std::vector<std::string>& files) {
  const fingerprinter fp;
  for (const auto& file : files) {
    const auto loaded = load_trace(file);
    if (!loaded) {
      std::cerr << "loopguard fingerprint: " << utf8::repair(loaded.error().message()) << '\n';
      return kExitBadInput;
    }
    const trace& tr = *loaded;
    call_pairing pairing;
    std::vector<std::optional<call_fingerprint>> calls(tr.events.size());
    for (std::size_t i = 0; i < tr.events.size(); ++i) {
      const auto& ev = tr.events[i];
      if (ev.kind == event_kind::tool_call) {
        calls[i] = fp.of_call(ev.tool, ev.args);
        pairing.on_call(ev, i);
        print_line(file, i, ev, &*calls[i], nullptr);
      } else if (ev.kind == event_kind::tool_result) {
        const std::uint64_t r = fp.of_result(ev.ok, ev.output);
        const auto call_index = pairing.on_result(ev);
        print_line(file, i, ev, call_index ? &*calls[*call_index] : nullptr, &r);
      }
    }
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace

void add_fingerprint_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "fingerprint",
      "Print the exact, structural and result fingerprints of every tool call and tool result "
      "in trace files (JSON Lines, docs/trace-format.md)");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "Trace files")->required()->check(CLI::ExistingFile);
  cmd->callback([files] {
    if (int rc = run_fingerprint(*files); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
