// Recording a run (trace_recorder, swarm_worker::record): the trace holds the run's events in the
// trace format, the detections file the lines the agent was given; replaying the trace with the
// run's configuration gives those lines again.
#include <fstream>
#include <sstream>

#include "../daemon/test_util.hpp"
#include "loopguard/detection_line.hpp"
#include "loopguard/swarm_worker.hpp"
#include "loopguard/trace_feed.hpp"
#include "loopguard/trace_recorder.hpp"
#include "loopguard/utf8.hpp"
#include "scripted_run.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::event_kind;
using loopguard::guard_mode;
using loopguard::manager_config;
using loopguard::recorded_lines;
using loopguard::swarm_worker;
using loopguard::trace_event;
using loopguard::trace_recorder;
using nlohmann::json;

namespace {

// What `loopguard replay` does for a one-worker trace: a fresh manager on the trace's clock, one
// detection line per detection (tools/cli/replay_trace.cpp, without the swarm).
std::string replay(const std::string& trace_text, const std::string& name,
                   const manager_config& config) {
  std::istringstream in(trace_text);
  auto tr = loopguard::read_trace(in);
  REQUIRE_MESSAGE(tr.has_value(), (tr ? "" : tr.error().message()));
  ExecutionEconomicsManager m(config);
  double now = 0;
  m.set_clock([&] { return now; });
  std::string out;
  for (std::size_t i = 0; i < tr->events.size(); ++i) {
    const trace_event& ev = tr->events[i];
    now = ev.t.value_or(static_cast<double>(i));
    for (const auto& d : loopguard::feed(m, ev).detections) {
      out += loopguard::detection_line(name, i, ev.worker, ev.swarm, d);
    }
  }
  return out;
}

std::size_t lines_of(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Records the scripted run through a swarm_worker into `dir`; returns the trace's path.
std::string record_scripted(const loopguard::test::temp_dir& dir, const manager_config& config) {
  swarm_worker w(config);
  double now = 1000;
  w.manager().set_clock([&] { return now; });
  loopguard::recording_options o;
  o.path = dir.file("run.jsonl");
  o.name = "scripted";
  o.clock = [&] { return now; };
  REQUIRE(w.record(o).ok());
  scripted_run run(w, now);
  run.run();
  const auto stats = w.recording();
  REQUIRE(stats.has_value());
  CHECK(stats->error.empty());
  CHECK(stats->detections_path == dir.file("run.detections.jsonl"));
  CHECK(w.stop_recording().ok());
  CHECK_FALSE(w.recording().has_value());
  return o.path;
}

}  // namespace

TEST_SUITE("trace recorder") {
  TEST_CASE("a recorded run replays to the same detection lines, byte for byte") {
    for (guard_mode mode : {guard_mode::enforce, guard_mode::observe}) {
      CAPTURE(static_cast<int>(mode));
      loopguard::test::temp_dir dir;
      const manager_config config = scripted_config(mode);
      const std::string path = record_scripted(dir, config);
      const std::string trace = loopguard::test::read_bytes(path);
      const std::string detections = loopguard::test::read_bytes(dir.file("run.detections.jsonl"));
      CHECK(loopguard::utf8::is_valid(trace));
      CHECK(loopguard::utf8::is_valid(detections));
      CHECK(lines_of(detections) > 10);
      // The meta line carries the configuration the replay needs.
      const json meta = json::parse(trace.substr(0, trace.find('\n')));
      CHECK(meta.at("kind") == "meta");
      CHECK(meta.at("format") == "1.3");
      CHECK(meta.at("name") == "scripted");
      const auto recorded_config = loopguard::parse_config(meta.at("config"));
      REQUIRE(recorded_config.has_value());
      CHECK(loopguard::to_json(*recorded_config) == loopguard::to_json(config));
      CHECK(replay(trace, path, *recorded_config) == detections);
      // Every kind of line is in there, the events of v1.1 and v1.2 included.
      for (const char* kind : {R"("kind":"user")", R"("kind":"resume")", R"("kind":"text")",
                               R"("kind":"tool_result","worker":"w0")"}) {
        CHECK(trace.find(kind) != std::string::npos);
      }
      for (const char* d : {"exact", "test_fix", "bash_cascade", "cycle", "summary",
                            "output_similarity", "content", "limit"}) {
        CAPTURE(d);
        CHECK(detections.find(std::string(R"("detector":")") + d + '"') != std::string::npos);
      }
    }
  }

  TEST_CASE("a rejected call is recorded without a result, an observed one with its result") {
    loopguard::test::temp_dir enforce_dir, observe_dir;
    const std::string enforced =
        loopguard::test::read_bytes(record_scripted(enforce_dir, scripted_config()));
    const std::string observed = loopguard::test::read_bytes(
        record_scripted(observe_dir, scripted_config(guard_mode::observe)));
    const auto results_of = [](const std::string& trace, const char* id) {
      return trace.find(
                 std::string(
                     R"("ok":false,"output":"FAILED tests/test_auth.py::test_token - AssertionError\n1 failed","id":")") +
                 id + '"') != std::string::npos;
    };
    CHECK(results_of(enforced, "t4"));
    CHECK_FALSE(results_of(enforced, "t5"));  // the 6th identical call was rejected: never ran
    CHECK(results_of(observed, "t5"));        // observed: it ran
    CHECK(lines_of(observed) > lines_of(enforced));
  }

  TEST_CASE("strings that are not valid UTF-8 are recorded repaired, as the manager saw them") {
    trace_recorder r({"r.jsonl", "w0", "default", ""});
    ExecutionEconomicsManager m;
    trace_event ev;
    ev.kind = event_kind::tool_result;
    ev.tool = "to\xC3";
    ev.output =
        "a\xFF"
        "b";
    const recorded_lines l = r.event(ev, m.on_tool_result(ev.tool, true, ev.output));
    CHECK(l.trace ==
          "{\"kind\":\"tool_result\",\"worker\":\"w0\",\"swarm\":\"default\","
          "\"tool\":\"to\xEF\xBF\xBD\",\"ok\":true,\"output\":\"a\xEF\xBF\xBD"
          "b\"}\n");
  }

  TEST_CASE("a streamed turn is one text event, its chunks' detections are written there") {
    trace_recorder r({"s.jsonl", "a1", "s", ""});
    ExecutionEconomicsManager m;
    recorded_lines all;
    const auto add = [&](const recorded_lines& l) {
      all.trace += l.trace;
      all.detections += l.detections;
    };
    std::string text;
    for (int i = 0; i < 30; ++i) {
      const std::string chunk = "all work and no play makes jack a dull boy. ";
      text += chunk;
      add(r.chunk(chunk, m.on_text_chunk(chunk), 5.0 + i));
    }
    CHECK(all.trace.empty());  // nothing until the turn ends
    CHECK(all.detections.empty());
    trace_event ev;
    ev.kind = event_kind::text;
    ev.content = text;
    ev.t = 40;
    add(r.event(ev, m.on_text(text)));
    CHECK(lines_of(all.trace) == 1);
    CHECK(all.trace.starts_with(R"({"kind":"text","worker":"a1","swarm":"s","t":40,)"));
    REQUIRE(lines_of(all.detections) >= 1);
    CHECK(all.detections.find(R"("event":0,"worker":"a1","swarm":"s","detector":"content")") !=
          std::string::npos);
    CHECK(all.detections.find(R"("loop_start":0})") != std::string::npos);

    // A stream a tool call closes is written as a text event of the chunks before the call.
    add(r.chunk("half a th", m.on_text_chunk("half a th"), 41));
    add(r.chunk("ought", m.on_text_chunk("ought"), 42));
    trace_event call;
    call.kind = event_kind::tool_call;
    call.tool = "ls";
    call.args = json::object();
    call.t = 43;
    add(r.event(call, m.on_tool_call("ls", json::object())));
    CHECK(all.trace.ends_with(
        "{\"kind\":\"text\",\"worker\":\"a1\",\"swarm\":\"s\",\"t\":41,\"content\":\"half a "
        "thought\"}\n{\"kind\":\"tool_call\",\"worker\":\"a1\",\"swarm\":\"s\",\"t\":43,\"tool\":"
        "\"ls\",\"args\":{}}\n"));
    CHECK(r.events() == 3);
  }

  TEST_CASE("arguments that are not an object: {} and the text the agent sent") {
    loopguard::test::temp_dir dir;
    swarm_worker w;
    loopguard::recording_options o;
    o.path = dir.file("a.jsonl");
    o.detections_path = dir.file("d.jsonl");
    REQUIRE(w.record(o).ok());
    w.on_tool_call_json("run", "not json {");
    w.on_tool_call("run", json::array({1, 2}));
    w.on_tool_call_json("run", R"({"ok":1.0})");
    REQUIRE(w.stop_recording().ok());
    const std::string trace = loopguard::test::read_bytes(o.path);
    CHECK(trace.find(R"("tool":"run","args":{},"args_text":"not json {"})") != std::string::npos);
    CHECK(trace.find(R"("tool":"run","args":{},"args_text":"[1,2]"})") != std::string::npos);
    CHECK(trace.find(R"("tool":"run","args":{"ok":1}})") != std::string::npos);
  }

  TEST_CASE("add_cost's detections are written at the event its verdict names") {
    trace_recorder r({"c.jsonl", "w0", "default", ""});
    manager_config c;
    c.limit.max_cost = 10;
    ExecutionEconomicsManager m(c);
    trace_event ev;
    ev.kind = event_kind::text;
    ev.content = "hi";
    CHECK(r.event(ev, m.on_text("hi")).detections.empty());
    const recorded_lines l = r.verdict_only(m.add_cost(20));
    CHECK(l.trace.empty());
    CHECK(l.detections.starts_with(
        R"({"trace":"c.jsonl","event":0,"worker":"w0","swarm":"default","detector":"limit")"));
  }

  TEST_CASE("record: before the first event, once, into files it can open, names are checked") {
    loopguard::test::temp_dir dir;
    loopguard::recording_options o;
    o.path = dir.file("no/such/dir/run.jsonl");
    swarm_worker w;
    CHECK(w.record(o).message().starts_with("record: cannot open " + o.path + ": "));
    o.path = "";
    CHECK(w.record(o).message() == "record: path: expected a file name, got nothing");
    o.path = dir.file("run.jsonl");
    o.worker = "w\xFF";
    CHECK(w.record(o).message() ==
          "record: worker: expected valid UTF-8 without U+FFFD, at most 128 bytes");
    o.worker = "";
    REQUIRE(w.record(o).ok());
    CHECK(w.record(o).message() == "record: this worker is already recording");
    REQUIRE(w.stop_recording().ok());
    CHECK(w.stop_recording().ok());  // nothing to stop
    w.on_text("hello");
    CHECK(w.record(o).message() ==
          "record: a recording starts before the run's first event; 1 events were judged already");
    CHECK(loopguard::default_detections_path("runs/a.jsonl") == "runs/a.detections.jsonl");
    CHECK(loopguard::default_detections_path("a.trace") == "a.trace.detections.jsonl");
  }
}
