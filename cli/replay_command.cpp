// `loopguard replay`: what Loopguard would have said, event by event, over recorded runs
// (docs/trace-format.md). Every worker gets its own manager; detections go to stdout as JSON
// Lines, a summary to stderr. With --daemon the global detections come from a real loopguardd
// (daemon_replay) instead of the offline swarm state.
#include <unistd.h>

#include <iostream>
#include <map>

#include "commands.hpp"
#include "daemon_replay.hpp"
#include "expectation.hpp"
#include "loopguard/utf8.hpp"
#include "progress_line.hpp"
#include "replay_swarm.hpp"
#include "replay_tally.hpp"
#include "replay_trace.hpp"
#include "run_config.hpp"
#include "trace_file.hpp"

namespace loopguard::cli {
namespace {

constexpr int kExitExpectFailed = 1;
constexpr int kExitTerminated = 3;

struct replay_options {
  std::string preset_name = "balanced";
  std::string config_file;
  bool expect = false;
  bool fail_on_terminate = false;
  std::string daemon_url, token, ca_file;
  double timeout_seconds = 10;
  bool deliveries = false;
  bool summary = false;
  std::vector<std::string> files;
};

// What one file contributed to the exit status.
struct file_outcome {
  bool passed = false, failed = false, bad_input = false, terminated = false;
  bool daemon_failed = false;  // stop: the daemon is gone or refused the connection
};

daemon_target target_of(const replay_options& o) {
  return {o.daemon_url, o.token, o.ca_file,
          std::chrono::milliseconds(static_cast<long long>(o.timeout_seconds * 1000))};
}

// The daemon's global detections of one file; the run ids go to stderr.
result<file_result> replay_on_daemon(const replay_options& o, const std::string& file,
                                     const trace& tr, const manager_config& config) {
  auto source = daemon_replay::connect(target_of(o), tr, config);
  if (!source) return source.error();
  for (const auto& [swarm, id] : (*source)->run_ids()) {
    std::cerr << file << ": swarm \"" << swarm << "\" runs as \"" << id << "\" on " << o.daemon_url
              << '\n';
  }
  return replay_trace(tr, config, **source);
}

void print_result(const replay_options& o, const std::string& file, const file_result& r) {
  std::string out;
  for (const auto& l : r.lines) {
    out += to_line(file, l);
    if (o.deliveries) out += delivery_lines(file, l);
  }
  std::cout << out;
  std::map<std::string, int> by_detector;
  for (const auto& l : r.lines) ++by_detector[std::string(to_string(l.det.detector))];
  std::cerr << file << ": " << r.events << " events, " << r.lines.size() << " detections";
  for (const auto& [d, n] : by_detector) std::cerr << ' ' << d << '=' << n;
  if (r.lifted > 0) std::cerr << ", global verdicts lifted: " << r.lifted;
  if (r.terminated) std::cerr << " (the run would have been terminated)";
  std::cerr << '\n';
}

// Replays one file, prints its lines (or its PASS/FAIL line) and its summary, and counts its
// detections in `tally`.
file_outcome replay_file(const replay_options& o, const manager_config& config,
                         const std::string& path, detection_tally& tally) {
  const std::string file = utf8::repair(path);  // as printed: everything we emit is UTF-8
  file_outcome out;
  const auto tr = load_trace(path);
  if (!tr) {
    const std::string err = utf8::repair(tr.error().message());
    std::cerr << "loopguard replay: " << err << '\n';
    if (o.expect) std::cout << "FAIL " << file << ": " << err << '\n';
    out.bad_input = true;
    out.failed = o.expect;
    return out;
  }
  const auto offline = [&] { return replay_trace(*tr, config, *offline_globals(config, *tr)); };
  const auto r = o.daemon_url.empty() ? offline() : replay_on_daemon(o, file, *tr, config);
  if (!r) {
    std::cerr << "loopguard replay: " << utf8::repair(r.error().message()) << '\n';
    out.daemon_failed = true;
    return out;
  }
  out.terminated = r->terminated;
  tally.add(r->lines);
  tally.add_file(r->events);
  if (!o.expect) {
    print_result(o, file, *r);
    return out;
  }
  const std::string why = check_expectation(*tr, *r);
  std::cout << (why.empty() ? "PASS " + file : "FAIL " + file + ": " + why) << '\n';
  out.passed = why.empty();
  out.failed = !why.empty();
  return out;
}

// The daemon options, before any file is read: an error is one line.
status check_daemon_options(const replay_options& o) {
  if (o.daemon_url.empty()) return {};
  client_options c;
  c.url = o.daemon_url;
  c.token = o.token;
  c.ca_file = o.ca_file;
  c.swarm = c.worker = "check";
  if (status s = validate(c); !s.ok()) return s.with_context("--daemon: ");
  return {};
}

int run_replay(const replay_options& o) {
  const auto loaded = load_config(o.preset_name, o.config_file);
  const status checked = loaded ? check_daemon_options(o) : loaded.error();
  if (!checked.ok()) {
    std::cerr << "loopguard replay: " << utf8::repair(checked.message()) << '\n';
    return kExitBadInput;
  }
  int passed = 0, failed = 0;
  bool bad_input = false, terminated = false;
  detection_tally tally;
  // On a terminal, a progress line below the per-file lines; never in a pipe or a file.
  progress_line progress(o.files.size(), ::isatty(STDERR_FILENO) == 1);
  std::size_t done = 0;
  for (const auto& path : o.files) {
    std::cerr << progress.clear();
    const file_outcome f = replay_file(o, *loaded, path, tally);
    std::cout.flush();  // the file's lines before the progress line is drawn again
    std::cerr << progress.restore()
              << progress.update(++done, tally.total(), progress_line::clock::now()) << std::flush;
    if (f.daemon_failed) {
      std::cerr << progress.clear();
      return kExitBadInput;
    }
    passed += f.passed;
    failed += f.failed;
    bad_input = bad_input || f.bad_input;
    terminated = terminated || f.terminated;
  }
  std::cerr << progress.clear();
  if (o.summary) std::cerr << tally.table();
  if (o.expect) std::cout << passed << " passed, " << failed << " failed\n";
  std::cout.flush();
  if (bad_input) return kExitBadInput;
  if (o.expect && failed > 0) return kExitExpectFailed;
  if (o.fail_on_terminate && terminated) return kExitTerminated;
  return 0;
}

void add_daemon_options(CLI::App& cmd, replay_options& o) {
  auto* d = cmd.add_option("--daemon", o.daemon_url,
                           "ws://HOST:PORT (wss:// for TLS) of a loopguardd: global detections "
                           "come from it, each worker through its own SDK client");
  cmd.add_option("--token", o.token, "The daemon's token")->needs(d);
  cmd.add_option("--ca-file", o.ca_file,
                 "wss://: PEM CA certificate(s) to verify the daemon with (default: the system's)")
      ->envname("LOOPGUARD_CA_FILE");
  cmd.add_option("--timeout", o.timeout_seconds,
                 "Seconds to wait for the daemon: to connect, and for each acknowledgement "
                 "(default 10)")
      ->check(CLI::Range(0.1, 3600.0))
      ->needs(d);
  cmd.add_flag("--deliveries", o.deliveries,
               "Also print each global verdict's delivery to the other workers of the swarm")
      ->needs(d);
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto o = std::make_shared<replay_options>();
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
  cmd->add_flag("--summary", o->summary,
                "After the run, print the detections by detector and severity to stderr");
  add_daemon_options(*cmd, *o);
  cmd->add_option("files", o->files, "Trace files")->required();
  cmd->footer(
      "Exit status: 0 ok; 1 an expectation failed (--expect); 2 bad input, or the daemon "
      "(--daemon) could not be reached, refused the connection or stopped answering; 3 a run would "
      "have "
      "been terminated (--fail-on-terminate).");
  cmd->callback([o] {
    if (int rc = run_replay(*o); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace loopguard::cli
