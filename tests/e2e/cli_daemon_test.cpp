// `loopguard replay --daemon` and `loopguard simulate` against the real loopguardd on
// loopback: the built `loopguard` binary runs as a user runs it (cli_process).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "../daemon/test_util.hpp"
#include "cli_process.hpp"
#include "daemon_process.hpp"
#include "loopguard/presets.hpp"
#include "loopguard/trace.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::cli_result;
using test::daemon_process;
using test::lines_of;
using test::run_loopguard;

namespace {

const std::string kData = LOOPGUARD_TEST_DATA_DIR;

// Every recording bundled with the tests: the examples and the replay cases.
std::vector<std::string> bundled_traces() {
  std::vector<std::string> out;
  for (const char* dir : {"/traces", "/replay"}) {
    for (const auto& e : std::filesystem::directory_iterator(kData + dir)) {
      if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The bundled recordings with more than one worker.
std::vector<std::string> multi_worker_traces() {
  std::vector<std::string> out;
  for (const auto& path : bundled_traces()) {
    std::ifstream in(path);
    auto tr = read_trace(in);
    REQUIRE(tr.has_value());
    std::set<std::pair<std::string, std::string>> workers;
    for (const auto& ev : tr->events) workers.emplace(ev.swarm, ev.worker);
    if (workers.size() > 1) out.push_back(path);
  }
  return out;
}

std::string url_of(const daemon_process& d) {
  return "ws://127.0.0.1:" + std::to_string(d.port());
}

// `head` followed by `tail`: the command line of a run.
std::vector<std::string> args(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

bool is_delivery(const std::string& line) {
  return line.find("\"delivered_to\":") != std::string::npos;
}

std::string without_deliveries(const std::string& out) {
  std::string kept;
  for (const auto& l : lines_of(out)) {
    if (!is_delivery(l)) kept += l + "\n";
  }
  return kept;
}

// (cause event, receiving worker, its event or none)
using delivery = std::tuple<std::size_t, std::string, std::optional<std::size_t>>;

// What --deliveries must show: every global line reaches every other worker of its swarm, at
// that worker's first event after the cause (none when it has no later event).
std::vector<delivery> expected_deliveries(const std::string& path, const std::string& offline) {
  std::ifstream in(path);
  const auto tr = read_trace(in);
  REQUIRE(tr.has_value());
  std::vector<delivery> out;
  for (const auto& line : lines_of(offline)) {
    const json l = json::parse(line);
    if (l["detector"] != "global" && l["detector"] != "budget" && l["detector"] != "handoff") {
      continue;
    }
    const std::size_t cause = l["event"];
    // A hand-off verdict is for the workers of its cycle, which its message names in order
    // ("around a → b → a 3 times"); the others are for every worker of the swarm.
    std::set<std::string> ring;
    if (l["detector"] == "handoff") {
      const std::string m = l["message"];
      const auto from = m.find("around ") + 7;
      const std::string names = m.substr(from, m.find(" times", from) - from);
      const std::string arrow = " \u2192 ";
      std::size_t p = 0;
      for (std::size_t q; (q = names.find(arrow, p)) != std::string::npos; p = q + arrow.size()) {
        ring.insert(names.substr(p, q - p));
      }
      ring.insert(names.substr(p));
    }
    std::map<std::string, std::optional<std::size_t>> next;  // other workers it is for
    for (std::size_t i = 0; i < tr->events.size(); ++i) {
      const trace_event& ev = tr->events[i];
      if (ev.swarm != l["swarm"] || ev.worker == l["worker"]) continue;
      if (!ring.empty() && !ring.contains(ev.worker)) continue;
      auto& at = next[ev.worker];
      if (!at && i > cause) at = i;
    }
    for (const auto& [worker, at] : next) out.emplace_back(cause, worker, at);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The deliveries printed, each checked to repeat its cause line's fields.
std::vector<delivery> printed_deliveries(const std::string& out) {
  std::vector<delivery> got;
  std::string cause_line;
  for (const auto& line : lines_of(out)) {
    if (!is_delivery(line)) {
      cause_line = line;
      continue;
    }
    const std::string head = line.substr(0, line.find(",\"delivered_to\":"));
    CHECK(head + "}" == cause_line);
    const json l = json::parse(line);
    std::optional<std::size_t> at;
    if (!l["delivered_at"].is_null()) at = l["delivered_at"].get<std::size_t>();
    got.emplace_back(l["event"].get<std::size_t>(), l["delivered_to"].get<std::string>(), at);
  }
  std::sort(got.begin(), got.end());
  return got;
}

// A port nobody listens on now.
unsigned short unused_port(const test::temp_dir& dir) {
  daemon_process probe(dir.file(""), dir.file("probe.db"));
  REQUIRE(probe.port() != 0);
  return probe.port();
}

// A token file holding "right-token", readable by its owner only (as loopguardd demands).
std::string token_file(const test::temp_dir& dir) {
  const std::string path = dir.file("token");
  { std::ofstream(path) << "right-token\n"; }
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

struct refusal {
  std::vector<std::string> command;
  std::string first_line_start;  // the one line on stderr starts so
};

// Commands that must fail with exit 2 and one line: `guarded` requires "right-token".
std::vector<refusal> refusal_cases(const std::string& unreachable, const std::string& guarded,
                                   const std::string& trace) {
  return {
      {{"replay", "--daemon", unreachable, "--timeout", "1", trace},
       "loopguard replay: cannot reach the daemon at " + unreachable + " within 1 s: "},
      {{"replay", "--daemon", guarded, "--token", "wrong", trace},
       "loopguard replay: the daemon at " + guarded + " refused the connection: unauthorized: "},
      {{"replay", "--daemon", "http://127.0.0.1:7070", trace},
       "loopguard replay: --daemon: url: expected ws://HOST:PORT"},
      {{"simulate", "--daemon", unreachable, "--timeout", "1", "--workers", "2", "--stuck", "1"},
       "loopguard simulate: cannot reach the daemon at " + unreachable + " within 1 s: "},
      {{"simulate", "--daemon", guarded, "--workers", "2", "--stuck", "1"},
       "loopguard simulate: the daemon at " + guarded + " refused the connection: unauthorized: "},
  };
}

// Two workers of a swarm whose name has the most bytes an identifier may have (64 x "é")
// repeat a call to a tool whose name is longer than the protocol allows.
std::string long_names_trace(const test::temp_dir& dir) {
  std::string swarm;
  for (int i = 0; i < 64; ++i) swarm += "\u00e9";
  const std::string tool(200, 't');
  const std::string path = dir.file("long-names.jsonl");
  std::ofstream out(path);
  for (int i = 0; i < 12; ++i) {
    const std::string who = i % 2 == 0 ? "w1" : "w2";
    out << R"({"kind":"tool_call","swarm":")" << swarm << R"(","worker":")" << who
        << R"(","tool":")" << tool << R"(","args":{"q":1}})" << '\n'
        << R"({"kind":"tool_result","swarm":")" << swarm << R"(","worker":")" << who
        << R"(","tool":")" << tool << R"(","ok":false,"output":"no"})" << '\n';
  }
  return path;
}

}  // namespace

TEST_SUITE("cli_daemon") {
  TEST_CASE("replay --daemon prints exactly the offline lines for every bundled recording" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto traces = bundled_traces();
    REQUIRE(traces.size() >= 19);
    REQUIRE(multi_worker_traces().size() >= 2);
    const cli_result offline = run_loopguard(dir.file(""), args({"replay"}, traces));
    REQUIRE(offline.exit == 0);
    REQUIRE(offline.out.find("\"detector\":\"global\"") != std::string::npos);
    const cli_result online =
        run_loopguard(dir.file(""), args({"replay", "--daemon", url_of(d)}, traces));
    CHECK_MESSAGE(online.exit == 0, online.err);
    CHECK(online.out == offline.out);
  }

  TEST_CASE("a verdict the daemon lifts is counted as offline and printed by neither" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string trace = kData + "/replay/global_lifted.jsonl";
    const cli_result offline = run_loopguard(dir.file(""), {"replay", trace});
    const cli_result online =
        run_loopguard(dir.file(""), {"replay", "--daemon", url_of(d), "--deliveries", trace});
    REQUIRE_MESSAGE(online.exit == 0, online.err);
    CHECK(without_deliveries(online.out) == offline.out);
    CHECK(offline.out.find("\"severity\":\"none\"") == std::string::npos);
    CHECK(online.out.find("\"severity\":\"none\"") == std::string::npos);
    CHECK(offline.err.find("global=2, global verdicts lifted: 2") != std::string::npos);
    CHECK(online.err.find("global=2, global verdicts lifted: 2") != std::string::npos);
  }

  TEST_CASE("the daemon judges with its own swarm rule: the same rule gives the same lines" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string config = dir.file("attocode.json");
    { std::ofstream(config) << json{{"swarm", preset("attocode")->swarm}}.dump(); }
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", config});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string trace = kData + "/replay/attocode_global_one_worker.jsonl";
    const cli_result offline =
        run_loopguard(dir.file(""), {"replay", "--preset", "attocode", trace});
    REQUIRE(offline.out.find("\"detector\":\"global\"") != std::string::npos);
    const cli_result online = run_loopguard(
        dir.file(""), {"replay", "--preset", "attocode", "--daemon", url_of(d), trace});
    CHECK_MESSAGE(online.exit == 0, online.err);
    CHECK(online.out == offline.out);
  }

  TEST_CASE("costs and a swarm budget: the daemon's lines are the offline lines" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string config = kData + "/replay/budget-config.json";
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", config});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string trace = kData + "/replay/swarm-wasted-cost.jsonl";
    const cli_result offline = run_loopguard(dir.file(""), {"replay", "--config", config, trace});
    REQUIRE(offline.exit == 0);
    for (const char* level : {"warn", "critical", "terminate"}) {
      CHECK(offline.out.find(std::string(R"("detector":"budget","severity":")") + level) !=
            std::string::npos);
    }
    CHECK(offline.out.find("(177k tokens, $2.65 burned on it)") != std::string::npos);
    const cli_result online =
        run_loopguard(dir.file(""), {"replay", "--config", config, "--daemon", url_of(d), trace});
    CHECK_MESSAGE(online.exit == 0, online.err);
    CHECK(online.out == offline.out);
  }

  TEST_CASE("the longest swarm name and a tool name beyond the limit give the same lines" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string trace = long_names_trace(dir);
    const cli_result offline = run_loopguard(dir.file(""), {"replay", trace});
    REQUIRE(offline.out.find("\"detector\":\"global\"") != std::string::npos);
    for (const auto& line : lines_of(offline.out)) {  // the global rule saw the tool as sent
      if (line.find("\"detector\":\"global\"") == std::string::npos) continue;
      CHECK(line.find(std::string(128, 't')) != std::string::npos);
      CHECK(line.find(std::string(129, 't')) == std::string::npos);
    }
    const cli_result online = run_loopguard(dir.file(""), {"replay", "--daemon", url_of(d), trace});
    CHECK_MESSAGE(online.exit == 0, online.err);
    CHECK(online.out == offline.out);
    CHECK(online.err.find("~h") != std::string::npos);  // the id: cut name, hash, run suffix
  }

  TEST_CASE("two runs against one daemon print the same lines: each runs under a fresh swarm id" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto traces = multi_worker_traces();
    const cli_result offline = run_loopguard(dir.file(""), args({"replay"}, traces));
    const cli_result first =
        run_loopguard(dir.file(""), args({"replay", "--daemon", url_of(d)}, traces));
    const cli_result second =
        run_loopguard(dir.file(""), args({"replay", "--daemon", url_of(d)}, traces));
    CHECK(first.exit == 0);
    CHECK(second.exit == 0);
    CHECK(first.out == offline.out);
    CHECK(second.out == offline.out);
    // stderr names the ids the swarms ran under: new ones every run
    CHECK(first.err.find("runs as \"s1~r") != std::string::npos);
    CHECK(first.err != second.err);
  }

  TEST_CASE("--deliveries marks each verdict's delivery to the other workers of its swarm" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    for (const auto& trace : multi_worker_traces()) {
      CAPTURE(trace);
      const cli_result offline = run_loopguard(dir.file(""), {"replay", trace});
      const cli_result r =
          run_loopguard(dir.file(""), {"replay", "--daemon", url_of(d), "--deliveries", trace});
      CHECK_MESSAGE(r.exit == 0, r.err);
      CHECK(without_deliveries(r.out) == offline.out);
      const auto expected = expected_deliveries(trace, offline.out);
      CHECK_FALSE(expected.empty());
      CHECK(printed_deliveries(r.out) == expected);
    }
  }

  TEST_CASE("replay --expect works with --daemon" * doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto traces = multi_worker_traces();
    const cli_result r =
        run_loopguard(dir.file(""), args({"replay", "--expect", "--daemon", url_of(d)}, traces));
    CHECK_MESSAGE(r.exit == 0, r.err);
    CHECK(r.out.find(std::to_string(traces.size()) + " passed, 0 failed") != std::string::npos);
  }

  TEST_CASE("an unreachable daemon, a wrong token or a bad URL: exit 2 and one line" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string unreachable = "ws://127.0.0.1:" + std::to_string(unused_port(dir));
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--token-file", token_file(dir)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string trace = kData + "/traces/swarm-global-doom-loop.jsonl";
    for (const auto& c : refusal_cases(unreachable, url_of(d), trace)) {
      CAPTURE(c.command[0]);
      CAPTURE(c.command[2]);
      const cli_result r = run_loopguard(dir.file(""), c.command, 30s);
      CHECK(r.exit == 2);
      CHECK(r.out.empty());
      CHECK(r.err.rfind(c.first_line_start, 0) == 0);
      CHECK(lines_of(r.err).size() == 1);
    }
    const cli_result ok = run_loopguard(
        dir.file(""), {"replay", "--daemon", url_of(d), "--token", "right-token", trace});
    CHECK_MESSAGE(ok.exit == 0, ok.err);
  }

  TEST_CASE("simulate: the stuck workers are told, a worker of another run is not" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::vector<std::string> common = {"simulate", "--daemon",   url_of(d), "--rate",
                                             "20",       "--duration", "2"};
    test::cli_process stuck(dir.file(""), args(common, {"--workers", "4", "--stuck", "3"}));
    test::cli_process other(dir.file(""), args(common, {"--workers", "2", "--stuck", "0"}));
    const cli_result a = stuck.finish(30s);
    const cli_result b = other.finish(30s);
    CHECK_MESSAGE(a.exit == 0, a.err);
    CHECK_MESSAGE(b.exit == 0, b.err);
    for (const char* w : {"w1", "w2", "w3"}) {
      CAPTURE(w);
      CHECK(a.out.find(std::string(w) + " told: level=warn kind=exact tool=\"search\"") !=
            std::string::npos);
      CHECK(a.out.find(std::string(w) + " told: level=critical kind=exact tool=\"search\"") !=
            std::string::npos);
      CHECK(a.out.find(std::string(w) + " stuck: sent 40, acknowledged 40, verdicts 2") !=
            std::string::npos);
    }
    CHECK(a.out.find("w4 healthy: sent 40, acknowledged 40") != std::string::npos);
    CHECK(a.out.find("workers=3") != std::string::npos);
    CHECK(b.out.find(" told: ") == std::string::npos);
    CHECK(b.out.find("verdicts: 0 received in all") != std::string::npos);
  }
}
