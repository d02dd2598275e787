// Recording a run end to end: an agent records its run through the SDK (swarm_worker::record),
// the built `loopguard replay` replays the recording with the configuration of its meta line,
// and prints exactly the detection lines the agent was given (docs/sdk.md, "Recording a run").
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../daemon/test_util.hpp"
#include "../sdk/scripted_run.hpp"
#include "cli_process.hpp"
#include "daemon_process.hpp"
#include "loopguard/swarm_worker.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::run_loopguard;

namespace {

// The configuration the meta line (the trace's first line) holds, as a file for --config.
std::string config_file(const test::temp_dir& dir, const std::string& trace) {
  const json meta = json::parse(trace.substr(0, trace.find('\n')));
  const std::string path = dir.file("config.json");
  std::ofstream(path) << meta.at("config").dump();
  return path;
}

// `loopguard replay --config <the meta's config> PATH`; its standard output.
std::string replayed(const test::temp_dir& dir, const std::string& path) {
  const auto r = run_loopguard(
      dir.file(""), {"replay", "--config", config_file(dir, test::read_bytes(path)), path});
  CHECK_MESSAGE(r.exit == 0, r.err);
  return r.out;
}

// The lines of `text` but those of detector `global`.
std::string without_global(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find(R"("detector":"global")") == std::string::npos) out += line + '\n';
  }
  return out;
}

}  // namespace

TEST_SUITE("e2e recording") {
  TEST_CASE("record through the SDK, replay with the CLI: the same detection lines" *
            doctest::timeout(60)) {
    for (guard_mode mode : {guard_mode::enforce, guard_mode::observe}) {
      CAPTURE(static_cast<int>(mode));
      test::temp_dir dir;
      swarm_worker w(lgtest::scripted_config(mode));
      double now = 1.0e9;  // a wall clock's epoch: t keeps the same double through the file
      w.manager().set_clock([&] { return now; });
      recording_options o;
      o.path = dir.file("run.jsonl");
      o.clock = [&] { return now; };
      REQUIRE(w.record(o).ok());
      lgtest::scripted_run<swarm_worker>(w, now).run();
      REQUIRE(w.stop_recording().ok());

      const std::string detections = test::read_bytes(dir.file("run.detections.jsonl"));
      CHECK(detections.find(R"("detector":"limit","severity":"terminate")") != std::string::npos);
      CHECK(replayed(dir, o.path) == detections);
    }
  }

  TEST_CASE(
      "an observing worker of a swarm records its run: the local lines replay, the global "
      "ones are the daemon's" *
      doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string daemon_config = dir.file("loopguardd.json");
    std::ofstream(daemon_config) << R"({"swarm":{"threshold":5,"critical_at":8,"min_workers":2}})";
    test::daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", daemon_config});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto join = [&](const std::string& worker, manager_config config) {
      auto w = std::make_unique<swarm_worker>(std::move(config));
      client_options o;
      o.url = "ws://127.0.0.1:" + std::to_string(d.port());
      o.swarm = "rec";
      o.worker = worker;
      REQUIRE(w->connect(o).ok());
      REQUIRE(w->client()->wait_connected(10s));
      return w;
    };
    manager_config observing;
    observing.mode = guard_mode::observe;
    auto recorder = join("w0", observing);
    auto other = join("w1", {});
    recording_options o;
    o.path = dir.file("swarm.jsonl");
    REQUIRE(recorder->record(o).ok());

    const auto dead_end = [](swarm_worker& w, int i) {
      const std::string id = "c" + std::to_string(i);
      const verdict v = w.on_tool_call("search", json{{"query", "flaky auth token"}}, id);
      if (v.action != action::reject) w.on_tool_result("search", false, "no results", id);
    };
    for (int i = 0; i < 9; ++i) {
      dead_end(*recorder, i);
      dead_end(*other, i);
      for (auto* w : {recorder.get(), other.get()}) {
        REQUIRE(w->client()->wait_acknowledged(w->client()->stats().sent, 10s));
      }
    }
    REQUIRE(recorder->client()->wait_verdicts(2, 10s));
    recorder->on_text("The search keeps failing; I will report it.");
    REQUIRE(recorder->stop_recording().ok());

    const std::string detections = test::read_bytes(dir.file("swarm.detections.jsonl"));
    const std::string trace = test::read_bytes(o.path);
    CHECK(trace.find(R"("worker":"w0","swarm":"rec")") != std::string::npos);
    CHECK(detections.find(R"("detector":"global","severity":"warn")") != std::string::npos);
    CHECK(detections.find(R"("detector":"global","severity":"critical")") != std::string::npos);
    // One worker's recording has no other worker's calls: offline, the swarm rule stays quiet.
    const std::string local = without_global(detections);
    CHECK(local != detections);
    CHECK(local.find(R"("detector":"exact")") != std::string::npos);
    CHECK(replayed(dir, o.path) == local);
  }
}
