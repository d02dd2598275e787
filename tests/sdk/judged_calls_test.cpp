// The manager's judged calls (set_call_sink, flush_calls): each call goes to the sink once, with
// its result when the result arrives, without one when its turn is over and none came; the
// fingerprints are those `loopguard fingerprint` and replay compute.
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "loopguard/fingerprint.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/trace.hpp"
#include "loopguard/utf8.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::fingerprinter;
using loopguard::judged_call;
using loopguard::severity;

namespace {

// A manager whose judged calls are collected in `sent`.
struct recorded {
  recorded() : recorded(loopguard::manager_config{}) {}
  explicit recorded(const loopguard::manager_config& c) : m(c) {
    m.set_call_sink([this](const judged_call& c) { sent.push_back(c); });
  }
  ExecutionEconomicsManager m;
  std::vector<judged_call> sent;
};

std::vector<std::size_t> events_of(const std::vector<judged_call>& calls) {
  std::vector<std::size_t> out;
  for (const auto& c : calls) out.push_back(c.call_event);
  return out;
}

}  // namespace

TEST_SUITE("judged calls") {
  TEST_CASE("a call is sent when its result arrives, with the manager's fingerprints") {
    recorded r;
    r.m.on_tool_call_json("bash", R"({"command":"cat   src/main.cpp"})", "1");
    CHECK(r.sent.empty());
    r.m.on_tool_result("bash", false, "cat: src/main.cpp: No such file", "1");
    REQUIRE(r.sent.size() == 1);
    const judged_call& c = r.sent[0];
    const fingerprinter fp;
    const auto call = fp.of_call("bash", {{"command", "cat   src/main.cpp"}});
    CHECK(c.tool == "bash");
    CHECK(c.exact == call.exact);
    CHECK(c.structural == call.structural);
    CHECK(c.summary == loopguard::summary_of(call));
    CHECK(c.summary == "bash:file_read:src/main.cpp");
    CHECK_FALSE(c.ok);
    REQUIRE(c.result.has_value());
    CHECK(*c.result == fp.of_result(false, "cat: src/main.cpp: No such file"));
    CHECK(c.call_event == 0);
  }

  TEST_CASE("the summary is cut to 80 bytes at a code-point boundary") {
    recorded r;
    const std::string query(79, 'q');
    r.m.on_tool_call("search", {{"query", query + "\xc3\xa9tude"}});
    r.m.on_tool_result("search", true, "");
    REQUIRE(r.sent.size() == 1);
    CHECK(r.sent[0].summary.size() <= loopguard::kCallSummaryBytes);
    CHECK(loopguard::utf8::is_valid(r.sent[0].summary));
    CHECK(r.sent[0].summary.size() <= loopguard::protocol::kMaxSummaryBytes);
  }

  TEST_CASE("parallel calls of one turn each wait for their result") {
    recorded r;
    r.m.on_tool_call_json("read", R"({"path":"a"})", "A");
    r.m.on_tool_call_json("read", R"({"path":"b"})", "B");
    CHECK(r.sent.empty());
    r.m.on_tool_result("read", true, "text of b", "B");
    r.m.on_tool_result("read", true, "text of a", "A");
    REQUIRE(r.sent.size() == 2);
    CHECK(events_of(r.sent) == std::vector<std::size_t>{1, 0});
    CHECK(r.sent[0].result == fingerprinter().of_result(true, "text of b"));
    CHECK(r.sent[1].result == fingerprinter().of_result(true, "text of a"));
  }

  TEST_CASE("a call without a result is sent at the next call after a result or text") {
    recorded r;
    r.m.on_tool_call_json("read", R"({"path":"a"})", "A");
    r.m.on_tool_call_json("read", R"({"path":"b"})", "B");
    r.m.on_tool_result("read", true, "b", "B");  // A's turn is over: a result came after it
    CHECK(events_of(r.sent) == std::vector<std::size_t>{1});
    r.m.on_tool_call_json("read", R"({"path":"c"})", "C");
    REQUIRE(r.sent.size() == 2);
    CHECK(r.sent[1].call_event == 0);
    CHECK_FALSE(r.sent[1].result.has_value());
    // Its late result sends nothing more: every call is sent once.
    r.m.on_tool_result("read", true, "a", "A");
    CHECK(r.sent.size() == 2);
    SUBCASE("a text ends the turn as a result does") {
      r.m.on_text("Reading on.");
      r.m.on_tool_call_json("read", R"({"path":"d"})", "D");
      REQUIRE(r.sent.size() == 3);
      CHECK(r.sent[2].call_event == 3);  // C
      CHECK_FALSE(r.sent[2].result.has_value());
    }
    SUBCASE("flush_calls sends what waits, without results, once") {
      r.m.flush_calls();
      REQUIRE(r.sent.size() == 3);
      CHECK(r.sent[2].call_event == 3);
      CHECK_FALSE(r.sent[2].result.has_value());
      r.m.flush_calls();
      CHECK(r.sent.size() == 3);
    }
  }

  TEST_CASE("a refused call is sent at once, without a result") {
    recorded r;
    loopguard::protocol::verdict v;
    v.kind = "exact";
    v.fingerprint = fingerprinter().of_call_text("search", R"({"query":"x"})").exact;
    v.level = severity::critical;
    v.message = "stop";
    r.m.on_swarm_verdict(v);
    REQUIRE(r.m.on_tool_call_json("search", R"({"query":"x"})", "1").action == action::reject);
    REQUIRE(r.sent.size() == 1);
    CHECK_FALSE(r.sent[0].result.has_value());
    r.m.flush_calls();
    CHECK(r.sent.size() == 1);
  }

  TEST_CASE("reset forgets waiting calls without sending them, no sink, nothing kept") {
    recorded r;
    r.m.on_tool_call_json("read", R"({"path":"a"})");
    r.m.reset();
    r.m.flush_calls();
    CHECK(r.sent.empty());
    ExecutionEconomicsManager m;
    m.on_tool_call_json("read", R"({"path":"a"})");
    std::vector<judged_call> late;
    m.set_call_sink([&](const judged_call& c) { late.push_back(c); });
    m.on_tool_result("read", true, "a");  // its call was made before the sink
    m.flush_calls();
    CHECK(late.empty());
  }

  TEST_CASE("calls that never get results are bounded") {
    recorded r;
    for (int i = 0; i < 1030; ++i) {
      r.m.on_tool_call_json("read", R"({"path":"f)" + std::to_string(i) + R"("})");
    }
    CHECK(r.sent.size() == 6);  // beyond 1024 waiting, the oldest go without a result
    CHECK(events_of(r.sent) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
    CHECK_FALSE(r.sent[0].result.has_value());
  }

  TEST_CASE("over the recorded runs, every call is sent once with replay's fingerprints") {
    loopguard::manager_config config;
    config.escalation.reject_at_critical = false;  // every recorded call runs
    config.escalation.terminate_after = 0;
    config.limit.enabled = false;
    const fingerprinter fp(config.fingerprint);
    std::size_t with_result = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(LOOPGUARD_TEST_DATA_DIR "/traces")) {
      std::ifstream in(entry.path(), std::ios::binary);
      const auto tr = loopguard::read_trace(in);
      REQUIRE(tr.has_value());
      CAPTURE(entry.path().string());
      // Per worker: a manager, its calls' trace indices, and what replay pairs.
      std::map<std::string, recorded> workers;
      std::map<std::string, std::vector<std::size_t>> trace_index;
      loopguard::call_pairing pairing;
      std::map<std::size_t, std::uint64_t> result_of;  // trace call index -> result fingerprint
      for (std::size_t i = 0; i < tr->events.size(); ++i) {
        const auto& ev = tr->events[i];
        const std::string w = ev.swarm + "/" + ev.worker;
        auto& r = workers.try_emplace(w, config).first->second;
        trace_index[w].push_back(i);
        if (ev.kind == loopguard::event_kind::tool_call) {
          pairing.on_call(ev, i);
          // Half through on_tool_call, half through on_tool_call_json: the same fingerprints.
          const verdict v = i % 2 ? r.m.on_tool_call(ev.tool, ev.args, ev.id)
                                  : r.m.on_tool_call_json(ev.tool, ev.args.dump(), ev.id);
          CHECK(v.action != action::reject);
        } else if (ev.kind == loopguard::event_kind::tool_result) {
          if (auto c = pairing.on_result(ev)) result_of[*c] = fp.of_result(ev.ok, ev.output);
          r.m.on_tool_result(ev.tool, ev.ok, ev.output, ev.id);
        } else {
          r.m.on_text(ev.content);
        }
      }
      std::size_t sent = 0, recorded_calls = 0;
      for (const auto& ev : tr->events) {
        recorded_calls += ev.kind == loopguard::event_kind::tool_call ? 1 : 0;
      }
      for (auto& [w, r] : workers) {
        r.m.flush_calls();
        std::set<std::size_t> seen;
        for (const judged_call& c : r.sent) {
          const std::size_t i = trace_index[w].at(c.call_event);
          CHECK(seen.insert(i).second);  // once
          const auto& ev = tr->events[i];
          const auto call = fp.of_call(ev.tool, ev.args);
          CHECK(c.tool == ev.tool);
          CHECK(c.exact == call.exact);
          CHECK(c.structural == call.structural);
          CHECK(c.summary == loopguard::summary_of(call));
          const auto paired = result_of.find(i);
          if (paired != result_of.end()) {
            REQUIRE(c.result.has_value());
            CHECK(*c.result == paired->second);
            ++with_result;
          }
        }
        sent += seen.size();
      }
      CHECK(sent == recorded_calls);
    }
    CHECK(with_result > 50);
  }

  TEST_CASE(
      "costs: a result's cost goes with its call, add_cost to the call waiting, or a charge") {
    using loopguard::protocol::cost;
    recorded r;
    r.m.add_cost(cost{5, 0.5});  // before any call: nothing to charge (the limit still counts it)
    CHECK(r.sent.empty());
    r.m.on_tool_call_json("search", R"({"q":"a"})", "1");
    r.m.add_cost(cost{100, 0});  // the call waiting for its result carries it
    r.m.on_tool_result("search", true, "none", "1", cost{1000, 0.25});
    REQUIRE(r.sent.size() == 1);
    CHECK(r.sent[0].spent == cost{1100, 0.25});
    CHECK_FALSE(r.sent[0].charge);
    r.m.add_cost(0.75);  // after it was sent: a charge to it
    REQUIRE(r.sent.size() == 2);
    CHECK(r.sent[1].charge);
    CHECK(r.sent[1].spent == cost{0, 0.75});
    CHECK(r.sent[1].exact == r.sent[0].exact);
    CHECK(r.sent[1].structural == r.sent[0].structural);
    CHECK(r.sent[1].tool == "search");
    CHECK_FALSE(r.sent[1].result.has_value());
    // A result whose call was sent without it (its turn ended): its cost is charged to it.
    r.m.on_tool_call_json("read", R"({"p":"x"})", "2");
    r.m.on_text("thinking");
    r.m.on_tool_call_json("search", R"({"q":"b"})", "3");  // sends call 2 without a result
    REQUIRE(r.sent.size() == 3);
    r.m.on_tool_result("read", true, "x", "2", cost{7, 0});
    REQUIRE(r.sent.size() == 4);
    CHECK(r.sent[3].charge);
    CHECK(r.sent[3].exact == r.sent[2].exact);
    CHECK(r.sent[3].spent == cost{7, 0});
    // Costs that say nothing are ignored; the rest is clamped to what one event may carry.
    const std::size_t n = r.sent.size();
    r.m.add_cost(cost{0, -3});
    r.m.add_cost(std::numeric_limits<double>::quiet_NaN());
    CHECK(r.sent.size() == n);  // call 3 is waiting: nothing sent, nothing added
    r.m.on_tool_result("search", true, "y", "3", cost{~0ull, 1e300});
    CHECK(r.sent.back().spent ==
          cost{loopguard::protocol::kMaxEventTokens, loopguard::protocol::kMaxEventAmount});
  }

  TEST_CASE("costs count for the cost limit, from results and add_cost alike") {
    loopguard::manager_config c;
    c.limit.max_cost = 1.0;
    ExecutionEconomicsManager m(c);
    m.on_tool_call_json("search", R"({"q":"a"})");
    CHECK(m.on_tool_result("search", true, "r", {}, {10, 0.6}).action == action::allow);
    const auto v = m.add_cost(0.5);
    REQUIRE_FALSE(v.detections.empty());
    CHECK(v.detections[0].detector == loopguard::detector_id::limit);
  }
}
