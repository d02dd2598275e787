// `loopguard eval`: replays labelled recordings offline, as `replay --expect` does, and reports
// how a preset agrees with the labels: per source and per detector, the disagreements, and the
// detection rates of unlabelled recordings (docs/eval.md).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "eval_report.hpp"
#include "expectation.hpp"
#include "loopguard/utf8.hpp"
#include "replay_trace.hpp"
#include "run_config.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

constexpr int kExitDisagreed = 1;

struct eval_options {
  std::string preset_name = "balanced";
  std::string config_file;
  bool json = false;
  std::size_t tolerance = 0;
  std::vector<std::string> paths;
};

// The files to evaluate: each path itself, or the *.jsonl files of a directory (sorted).
result<std::vector<std::string>> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& entry : std::filesystem::directory_iterator(p, ec)) {
      if (entry.path().extension() == ".jsonl") in_dir.push_back(entry.path().string());
    }
    if (ec) return status::error(p + ": cannot list: " + ec.message());
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  return files;
}

eval_trace evaluate(const std::string& file, const trace& tr, const file_result& r) {
  eval_trace t;
  t.file = file;
  t.source = source_of(file, tr.meta ? tr.meta->agent : std::string());
  for (const auto& ev : tr.events) t.tool_calls += ev.kind == event_kind::tool_call ? 1U : 0U;
  for (const auto& l : r.lines) {
    if (l.det.level >= severity::warn) ++t.detections[std::string(to_string(l.det.detector))];
  }
  const trace_expect any;  // unlabelled: the first detection of all
  if (tr.meta && tr.meta->expect) {
    t.label = *tr.meta->expect;
    t.disagreement = check_expectation(tr, r);
  }
  if (const auto i = first_counted(t.label ? *t.label : any, r)) {
    const replay_line& l = r.lines[*i];
    t.first = first_seen{l.event, std::string(to_string(l.det.detector)), l.det.tool, l.det.level};
  }
  return t;
}

int run_eval(const eval_options& o) {
  const auto config = load_config(o.preset_name, o.config_file);
  const auto files = config ? expand(o.paths) : result<std::vector<std::string>>(config.error());
  if (!files) {
    std::cerr << "loopguard eval: " << utf8::repair(files.error().message()) << '\n';
    return kExitBadInput;
  }
  std::vector<eval_trace> traces;
  std::vector<std::string> errors;
  for (const auto& path : *files) {
    const std::string file = utf8::repair(path);
    const auto tr = load_trace(path);
    if (!tr) {
      errors.push_back(utf8::repair(tr.error().message()));
      std::cerr << "loopguard eval: " << errors.back() << '\n';
      continue;
    }
    const auto r = replay_trace(*tr, *config, *offline_globals(*config, *tr));
    if (!r) {  // offline globals never fail; kept for the contract
      errors.push_back(file + ": " + utf8::repair(r.error().message()));
      continue;
    }
    traces.push_back(evaluate(file, *tr, *r));
  }
  const std::string name = o.config_file.empty() ? o.preset_name : utf8::repair(o.config_file);
  const eval_report report = make_report(name, std::move(traces), std::move(errors));
  if (o.json) {
    std::cout << to_json(report).dump(2) << '\n';
  } else {
    std::cout << to_text(report);
  }
  std::cout.flush();
  if (!report.errors.empty()) return kExitBadInput;
  return report.disagreements() > o.tolerance ? kExitDisagreed : 0;
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<eval_options>();
  auto* cmd = app.add_subcommand(
      "eval", "Replay labelled recordings and report how a preset agrees with their labels");
  auto* p = cmd->add_option("--preset", o->preset_name,
                            "Preset to judge with (default: balanced; see docs/presets.md)");
  auto* c = cmd->add_option("--config", o->config_file, "JSON configuration file")
                ->check(CLI::ExistingFile);
  p->excludes(c);
  cmd->add_flag("--json", o->json, "One JSON document instead of tables (docs/eval.md)");
  cmd->add_option("--tolerance", o->tolerance,
                  "Disagreements allowed before the exit status is 1 (default 0)");
  cmd->add_option("paths", o->paths, "Trace files, or directories of *.jsonl files")->required();
  cmd->footer(
      "Exit status: 0 every labelled recording agrees (or no more disagree than --tolerance); 1 "
      "more disagree; 2 bad input (an unreadable recording, named with its line, or a bad "
      "preset or configuration).");
  cmd->callback([o] {
    if (int rc = run_eval(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
