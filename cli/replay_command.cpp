// `loopguard replay`: what Loopguard would have said, event by event, over recorded runs
// (docs/trace-format.md). Every worker gets its own manager; detections go to stdout as JSON
// Lines, a summary to stderr.
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "loopguard/canonical_json.hpp"
#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/json_input.hpp"
#include "loopguard/presets.hpp"
#include "loopguard/utf8.hpp"
#include "replay_swarm.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

constexpr int kExitExpectFailed = 1;
constexpr int kExitTerminated = 3;

struct options {
  std::string preset_name = "balanced";
  std::string config_file;
  bool expect = false;
  bool fail_on_terminate = false;
  std::vector<std::string> files;
};

struct replay_line {
  std::size_t event;
  std::string worker, swarm;
  detection det;
};

struct worker_run {
  explicit worker_run(const manager_config& c) : manager(c) {}
  ExecutionEconomicsManager manager;
  std::vector<std::size_t> trace_index;  // manager event index -> trace event index
};

std::string to_line(const std::string& file, const replay_line& l) {
  std::string out = "{\"trace\":";
  append_json_string(out, file);
  out += ",\"event\":" + std::to_string(l.event) + ",\"worker\":";
  append_json_string(out, l.worker);
  out += ",\"swarm\":";
  append_json_string(out, l.swarm);
  out += ",\"detector\":";
  append_json_string(out, to_string(l.det.detector));
  out += ",\"severity\":";
  append_json_string(out, to_string(l.det.level));
  out += ",\"count\":" + std::to_string(l.det.count) + ",\"message\":";
  append_json_string(out, l.det.message);
  char conf[32];
  std::snprintf(conf, sizeof conf, "%.2f", l.det.confidence);
  out += ",\"confidence\":";
  out += conf;
  out += ",\"loop_start\":" + std::to_string(l.det.loop_start) + "}\n";
  return out;
}

struct file_result {
  std::vector<replay_line> lines;
  bool terminated = false;
  std::size_t events = 0;
  std::size_t lifted = 0;  // global verdicts lifted (not output lines)
};

file_result replay_trace(const trace& tr, const manager_config& config) {
  file_result out;
  out.events = tr.events.size();
  std::map<std::pair<std::string, std::string>, worker_run> runs;
  swarm_replay swarms(config, tr);
  double now = 0;
  for (std::size_t i = 0; i < tr.events.size(); ++i) {
    const trace_event& ev = tr.events[i];
    now = ev.t.value_or(static_cast<double>(i));
    auto [it, inserted] = runs.try_emplace({ev.swarm, ev.worker}, config);
    worker_run& run = it->second;
    if (inserted) run.manager.set_clock([&now] { return now; });
    run.trace_index.push_back(i);
    verdict v;
    switch (ev.kind) {
      case event_kind::tool_call:
        v = run.manager.on_tool_call(ev.tool, ev.args, ev.id);
        break;
      case event_kind::tool_result:
        v = run.manager.on_tool_result(ev.tool, ev.ok, ev.output, ev.id);
        break;
      case event_kind::text:
        v = run.manager.on_text(ev.content);
        break;
    }
    for (detection& d : v.detections) {
      if (d.loop_start < run.trace_index.size()) d.loop_start = run.trace_index[d.loop_start];
      out.lines.push_back({i, ev.worker, ev.swarm, std::move(d)});
    }
    if (v.action == action::terminate) out.terminated = true;
    auto swarm_step = swarms.on_event(i);
    out.lifted += swarm_step.lifted.size();
    for (detection& d : swarm_step.detections) {
      out.lines.push_back({i, ev.worker, ev.swarm, std::move(d)});
    }
  }
  return out;
}

// Checks a file's meta expectation; empty when it holds, else why not.
std::string check_expectation(const trace& tr, const file_result& r) {
  if (!tr.meta || !tr.meta->expect) return "no meta line with an \"expect\" object";
  const trace_expect& x = *tr.meta->expect;
  std::optional<std::size_t> first;
  for (const auto& l : r.lines) {
    if (!x.detector.empty() && to_string(l.det.detector) != x.detector) continue;
    if (l.det.level < severity::warn) continue;
    first = l.event;
    break;
  }
  const std::string what = x.detector.empty() ? "a detection" : "a " + x.detector + " detection";
  if (!x.loop) {
    if (first)
      return "expected no " + what.substr(2) + ", got one at event " + std::to_string(*first);
    return "";
  }
  if (!first) return "expected " + what + ", got none";
  if (x.within && *first > *x.within) {
    return "expected " + what + " at or before event " + std::to_string(*x.within) +
           ", first at event " + std::to_string(*first);
  }
  return "";
}

// One line per file on stderr: events, detections per detector, lifted global verdicts.
void print_summary(const std::string& file, const file_result& r) {
  std::map<std::string, int> by_detector;
  for (const auto& l : r.lines) ++by_detector[std::string(to_string(l.det.detector))];
  std::cerr << file << ": " << r.events << " events, " << r.lines.size() << " detections";
  for (const auto& [d, n] : by_detector) std::cerr << ' ' << d << '=' << n;
  if (r.lifted > 0) std::cerr << ", global verdicts lifted: " << r.lifted;
  if (r.terminated) std::cerr << " (the run would have been terminated)";
  std::cerr << '\n';
}

result<manager_config> load_config(const options& o) {
  if (o.config_file.empty()) {
    auto p = preset(o.preset_name);
    if (!p) {
      std::string names;
      for (auto n : preset_names()) names += (names.empty() ? "" : ", ") + std::string(n);
      return status::error("unknown preset \"" + o.preset_name + "\" (known: " + names + ")");
    }
    return *p;
  }
  std::ifstream in(o.config_file, std::ios::binary);
  if (!in) return status::error(o.config_file + ": cannot open");
  std::ostringstream whole;
  whole << in.rdbuf();
  const std::string text = std::move(whole).str();
  const auto doc = json_input::parse(text);
  if (!doc) return doc.error().with_context(o.config_file + ": ");
  auto config = parse_config(doc->value);
  if (!config) return config.error().with_context(o.config_file + ": ");
  if (status s = swarm_replay::validate(*config); !s.ok()) {
    return s.with_context(o.config_file + ": ");
  }
  return config;
}

struct run_totals {
  int passed = 0, failed = 0;
  bool bad_input = false, terminated = false;
};

// Replays one file: its lines (or its PASS/FAIL line with --expect) and its summary.
void replay_file(const options& o, const std::string& path, const manager_config& config,
                 run_totals& totals) {
  const std::string file = utf8::repair(path);  // as printed: everything we emit is UTF-8
  const auto loaded_trace = load_trace(path);
  if (!loaded_trace) {
    const std::string err = utf8::repair(loaded_trace.error().message());
    std::cerr << "loopguard replay: " << err << '\n';
    totals.bad_input = true;
    if (o.expect) {
      std::cout << "FAIL " << file << ": " << err << '\n';
      ++totals.failed;
    }
    return;
  }
  const trace& tr = *loaded_trace;
  const file_result r = replay_trace(tr, config);
  totals.terminated = totals.terminated || r.terminated;
  if (o.expect) {
    const std::string why = check_expectation(tr, r);
    std::cout << (why.empty() ? "PASS " : "FAIL ") << file << (why.empty() ? "" : ": ") << why
              << '\n';
    ++(why.empty() ? totals.passed : totals.failed);
  } else {
    std::string out;
    for (const auto& l : r.lines) out += to_line(file, l);
    std::cout << out;
  }
  print_summary(file, r);
}

int run(const options& o) {
  const auto loaded = load_config(o);
  if (!loaded) {
    std::cerr << "loopguard replay: " << utf8::repair(loaded.error().message()) << '\n';
    return kExitBadInput;
  }
  run_totals totals;
  for (const auto& path : o.files) replay_file(o, path, *loaded, totals);
  if (o.expect) std::cout << totals.passed << " passed, " << totals.failed << " failed\n";
  std::cout.flush();
  if (totals.bad_input) return kExitBadInput;
  if (o.expect && totals.failed > 0) return kExitExpectFailed;
  if (o.fail_on_terminate && totals.terminated) return kExitTerminated;
  return 0;
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto o = std::make_shared<options>();
  auto* cmd = app.add_subcommand(
      "replay", "Replay recorded runs (docs/trace-format.md) and print what would be detected");
  auto* p = cmd->add_option("--preset", o->preset_name,
                            "Preset to judge with (default: balanced; see docs/presets.md)");
  auto* c = cmd->add_option("--config", o->config_file, "JSON configuration file")
                ->check(CLI::ExistingFile);
  p->excludes(c);
  cmd->add_flag("--expect", o->expect,
                "Check each file's meta expectation; print PASS/FAIL lines and a summary");
  cmd->add_flag("--fail-on-terminate", o->fail_on_terminate,
                "Exit with status 3 when a run would have been terminated");
  cmd->add_option("files", o->files, "Trace files")->required();
  cmd->footer(
      "Exit status: 0 ok; 1 an expectation failed (--expect); 2 bad input; 3 a run would have "
      "been terminated (--fail-on-terminate).");
  cmd->callback([o] {
    if (int rc = run(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
