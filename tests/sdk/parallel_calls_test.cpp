// The parallel calls of one turn (calls made with no result between them) are one attempt for the
// rules that count attempts: result, similar_args, test_fix, bash_cascade and the consecutive
// failures limit. Each case also runs the same calls one after another, which must fire.
#include <string>
#include <utility>
#include <vector>

#include "call_history.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;

namespace parallel_calls {

struct planned_call {
  std::string tool;
  std::string args;
  bool ok;
  std::string output;
};

enum class answers { in_order, reversed };

// One turn: every call first, then every result, each paired by its id (the results in the
// calls' order or the reverse). Returns the verdicts of the results, in the calls' order.
std::vector<verdict> parallel_turn(ExecutionEconomicsManager& m,
                                   const std::vector<planned_call>& calls,
                                   answers order = answers::in_order) {
  std::vector<std::string> ids;
  for (const planned_call& c : calls) {
    ids.push_back("c" + std::to_string(m.events()));
    m.on_tool_call_json(c.tool, c.args, ids.back());
  }
  std::vector<verdict> out(calls.size());
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const std::size_t i = order == answers::in_order ? k : calls.size() - 1 - k;
    out[i] = m.on_tool_result(calls[i].tool, calls[i].ok, calls[i].output, ids[i]);
  }
  return out;
}

std::size_t count_fired(const std::vector<verdict>& vs, detector_id d) {
  std::size_t n = 0;
  for (const verdict& v : vs) n += fired(v, d) ? 1 : 0;
  return n;
}

// The same calls one after another: each call, then its result.
std::vector<verdict> one_by_one(ExecutionEconomicsManager& m,
                                const std::vector<planned_call>& calls) {
  std::vector<verdict> out;
  for (const planned_call& c : calls) {
    m.on_tool_call_json(c.tool, c.args);
    out.push_back(m.on_tool_result(c.tool, c.ok, c.output));
  }
  return out;
}

// A change that works (an edit), then one turn of `calls`: the verdicts of the turn's results.
std::vector<verdict> edit_then_turn(ExecutionEconomicsManager& m, int edit,
                                    const std::vector<planned_call>& calls) {
  step(m, "edit_file", R"({"path":"p.py","new":")" + std::to_string(edit) + "\"}", true, "ok");
  return parallel_turn(m, calls);
}

bool any_fired(const std::vector<verdict>& vs, detector_id d) {
  for (const verdict& v : vs) {
    if (fired(v, d)) return true;
  }
  return false;
}

std::vector<planned_call> missing_reads(int turn) {
  std::vector<planned_call> calls;
  for (const char* f : {"a", "b", "c"}) {
    calls.push_back({"read_file", R"({"path":")" + std::string(f) + std::to_string(turn) + "\"}",
                     false, "No such file or directory"});
  }
  return calls;
}

}  // namespace parallel_calls

using namespace parallel_calls;

TEST_SUITE("parallel calls") {
  TEST_CASE("result: one turn's failing reads are one attempt, three such turns fire") {
    ExecutionEconomicsManager m;
    CHECK_FALSE(any_fired(parallel_turn(m, missing_reads(0)), detector_id::result));
    CHECK_FALSE(any_fired(parallel_turn(m, missing_reads(1)), detector_id::result));
    const std::vector<verdict> third = parallel_turn(m, missing_reads(2));
    REQUIRE(fired(third.front(), detector_id::result));
    CHECK(get(third.front(), detector_id::result).count == 3);  // turns, not the seven calls
    CHECK(get(third.front(), detector_id::result).confidence == doctest::Approx(0.9));
    // The turn's later failures add no attempt: the nudge is given once.
    CHECK(count_fired(third, detector_id::result) == 1);
    // The fourth turn answered in reverse order: one detection, one attempt more.
    const std::vector<verdict> fourth = parallel_turn(m, missing_reads(3), answers::reversed);
    REQUIRE(count_fired(fourth, detector_id::result) == 1);
    CHECK(get(fourth.back(), detector_id::result).count == 4);

    ExecutionEconomicsManager sequential;
    const std::vector<verdict> vs = one_by_one(sequential, missing_reads(0));
    REQUIRE(fired(vs.back(), detector_id::result));
    CHECK(get(vs.back(), detector_id::result).count == 3);
  }

  TEST_CASE("similar_args: near-identical searches of one turn are one attempt") {
    const std::vector<planned_call> searches = {
        {"search", R"({"query":"foo"})", false, "No results found."},
        {"search", R"({"query":"fo0"})", false, "No results found."},
        {"search", R"({"query":"f00"})", false, "No results found."},
    };
    const planned_call next{"search", R"({"query":"fOo"})", false, "No results found."};
    ExecutionEconomicsManager m;
    parallel_turn(m, searches);
    CHECK_FALSE(fired(m.on_tool_call_json(next.tool, next.args), detector_id::similar_args));
    m.on_tool_result(next.tool, next.ok, next.output);
    // Two attempts so far (the turn and the call after it): the fourth attempt is the rule's.
    one_by_one(m, {{"search", R"({"query":"fo"})", false, "No results found."}});
    const verdict v = m.on_tool_call_json("search", R"({"query":"f0o"})");
    REQUIRE(fired(v, detector_id::similar_args));
    CHECK(get(v, detector_id::similar_args).count == 4);

    ExecutionEconomicsManager sequential;
    one_by_one(sequential, searches);
    CHECK(fired(sequential.on_tool_call_json(next.tool, next.args), detector_id::similar_args));
  }

  TEST_CASE("test_fix: test runs of one turn failing alike are one failing run") {
    const auto turn = [](int i) {
      return std::vector<planned_call>{
          {"bash", R"({"command":"pytest tests/a.py"})", false, "E   KeyError: 'x'\n1 failed"},
          {"bash", R"({"command":"pytest tests/b.py -k x"})", false,
           "E   KeyError: 'x'\n" + std::to_string(i + 1) + " failed"},
      };
    };
    ExecutionEconomicsManager m;
    for (int i = 0; i < 2; ++i) {
      CHECK_FALSE(any_fired(edit_then_turn(m, i, turn(i)), detector_id::test_fix));
    }
    const std::vector<verdict> third = edit_then_turn(m, 2, turn(2));
    CHECK(fired(third.front(), detector_id::test_fix));
    CHECK(get(third.front(), detector_id::test_fix).count == 3);
    CHECK_FALSE(fired(third.back(), detector_id::test_fix));  // the same attempt: nothing new

    ExecutionEconomicsManager sequential;
    step(sequential, "edit_file", R"({"path":"p.py","new":"0"})", true, "ok");
    one_by_one(sequential, turn(0));
    step(sequential, "edit_file", R"({"path":"p.py","new":"1"})", true, "ok");
    CHECK(any_fired(one_by_one(sequential, turn(1)), detector_id::test_fix));
  }

  TEST_CASE("bash_cascade: shell commands of one turn failing alike are one failure") {
    const auto turn = [](int i) {
      std::vector<planned_call> calls;
      for (const char* dir : {"src", "lib", "include"}) {
        calls.push_back({"bash",
                         R"({"command":"make -C )" + std::string(dir) + std::to_string(i) + "\"}",
                         false, "make: *** No rule to make target 'all'.  Stop."});
      }
      return calls;
    };
    ExecutionEconomicsManager m;
    CHECK_FALSE(any_fired(parallel_turn(m, turn(0)), detector_id::bash_cascade));
    CHECK_FALSE(any_fired(parallel_turn(m, turn(1)), detector_id::bash_cascade));
    CHECK(fired(parallel_turn(m, turn(2)).front(), detector_id::bash_cascade));

    ExecutionEconomicsManager sequential;
    CHECK(fired(one_by_one(sequential, turn(0)).back(), detector_id::bash_cascade));
  }

  TEST_CASE("consecutive failures: the failed results of one turn are one failure") {
    auto c = preset("ralph");  // terminates at the 5th failure in a row
    const std::vector<planned_call> turn = {
        {"t0", "{}", false, "e0"}, {"t1", "{}", false, "e1"}, {"t2", "{}", false, "e2"},
        {"t3", "{}", false, "e3"}, {"t4", "{}", false, "e4"}, {"t5", "{}", false, "e5"},
    };
    ExecutionEconomicsManager m(c);
    for (const verdict& v : parallel_turn(m, turn)) CHECK(v.action != action::terminate);
    ExecutionEconomicsManager sequential(c);
    bool terminated = false;
    for (const verdict& v : one_by_one(sequential, turn))
      terminated |= v.action == action::terminate;
    CHECK(terminated);
  }

  TEST_CASE("result: a success in the turn ends the error streak, as it would one by one") {
    ExecutionEconomicsManager m;
    for (int turn = 0; turn < 4; ++turn) {
      std::vector<planned_call> calls = missing_reads(turn);
      calls[1].ok = true;
      calls[1].output = "def main():\n    pass\n";
      CHECK_FALSE(any_fired(parallel_turn(m, calls), detector_id::result));
    }
  }

  TEST_CASE("test_fix: failures of one turn unlike each other are one failure in a row") {
    // Every run fails its own way: only give_up_at (10 failures in a row) speaks, at the tenth
    // turn, where one by one the same runs reach it at the fifth.
    const char* errors[] = {"TypeError: unsupported operand type(s) for +",
                            "KeyError: 'collect_ignore'",
                            "AttributeError: 'int' object has no attribute 'split'",
                            "ValueError: invalid literal for int() with base 10",
                            "ImportError: cannot import name 'helper' from 'pkg'",
                            "ZeroDivisionError: division by zero",
                            "IndexError: list index out of range",
                            "NameError: name 'config' is not defined",
                            "RecursionError: maximum recursion depth exceeded",
                            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"};
    const auto turn = [&errors](int i) {
      return std::vector<planned_call>{
          {"bash", R"({"command":"pytest tests/a.py"})", false,
           std::string("E   ") + errors[i % 10] + "\n1 failed"},
          {"bash", R"({"command":"pytest tests/b.py"})", false,
           std::string("E   ") + errors[(i + 5) % 10] + "\n1 failed"},
      };
    };
    ExecutionEconomicsManager m;
    for (int i = 0; i < 9; ++i) {
      CHECK_FALSE(any_fired(edit_then_turn(m, i, turn(i)), detector_id::test_fix));
    }
    const std::vector<verdict> tenth = edit_then_turn(m, 9, turn(9));
    REQUIRE(fired(tenth.front(), detector_id::test_fix));
    CHECK(get(tenth.front(), detector_id::test_fix).count == 10);

    ExecutionEconomicsManager sequential;
    bool fired_by_fifth = false;
    for (int i = 0; i < 5; ++i) {
      step(sequential, "edit_file", R"({"path":"p.py","new":")" + std::to_string(i) + "\"}", true,
           "ok");
      fired_by_fifth = any_fired(one_by_one(sequential, turn(i)), detector_id::test_fix);
    }
    CHECK(fired_by_fifth);
  }

  TEST_CASE("a refused call ends its turn: the next call starts another") {
    // The sixth identical call is refused (exact, critical); the agent does not run it, reports
    // no result for it, and its next call answers the refusal.
    ExecutionEconomicsManager agent;
    for (int i = 0; i < 5; ++i) step(agent, "bash", R"({"command":"ls"})", true, "a.py");
    REQUIRE(agent.on_tool_call_json("bash", R"({"command":"ls"})").action == action::reject);
    const std::uint64_t turns = agent.stats().turns;
    agent.on_tool_call_json("bash", R"({"command":"ls -la"})");
    CHECK(agent.stats().turns == turns + 1);
  }

  TEST_CASE("a text opens the turn its calls belong to, a result closes it") {
    ExecutionEconomicsManager m;
    m.on_text("I will read three files at once.");
    CHECK_FALSE(any_fired(parallel_turn(m, missing_reads(0)), detector_id::result));
    CHECK(m.stats().turns == 1);
    // The same three reads, each after the previous result, are three turns.
    CHECK(any_fired(one_by_one(m, missing_reads(1)), detector_id::result));
  }

  TEST_CASE("the history's window of turns") {
    using loopguard::sdk::call_history;
    using loopguard::sdk::call_record;
    call_history h(64);
    // Turns 1, 2, 2, 2, 3: five calls, three turns.
    for (const std::size_t turn : {1, 2, 2, 2, 3}) {
      call_record r;
      r.turn = turn;
      h.push(std::move(r));
    }
    CHECK(h.calls_in_turns(0) == 0);
    CHECK(h.calls_in_turns(1) == 1);
    CHECK(h.calls_in_turns(2) == 4);  // turn 2's three calls come whole
    CHECK(h.calls_in_turns(3) == 5);
    CHECK(h.calls_in_turns(10) == 5);
    // The calls of the turn being judged take no turn of the window.
    CHECK(h.calls_in_turns(0, 3) == 1);
    CHECK(h.calls_in_turns(1, 3) == 4);
    // After a restart only the calls made since count.
    h.restart();
    call_record r;
    r.turn = 4;
    h.push(std::move(r));
    CHECK(h.calls_in_turns(10) == 1);
  }
}
