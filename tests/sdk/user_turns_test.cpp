// What a user message and a resume restart (docs/detectors.md, "User messages and resumes").
#include <string>

#include "loopguard/fingerprint.hpp"
#include "loopguard/protocol.hpp"
#include "sdk_test_util.hpp"

using namespace lgtest;
using loopguard::action;
using loopguard::detector_id;
using loopguard::severity;

namespace {

void read_twice(ExecutionEconomicsManager& m) {
  step(m, "read_file", R"({"path":"a.py"})", true, "x = 1");
  step(m, "read_file", R"({"path":"a.py"})", true, "x = 1");
}

}  // namespace

TEST_SUITE("user messages") {
  TEST_CASE("text turns answering different messages are not a monologue") {
    ExecutionEconomicsManager m;
    m.on_text("I cannot remove a passenger from a reservation.");
    m.on_user_message("Can you at least change the cabin?");
    m.on_text("Let me look at your reservation first.");
    m.on_user_message("Please remove the passenger.");
    const verdict v = m.on_text("I cannot remove a passenger from a reservation.");
    CHECK_FALSE(fired(v, detector_id::summary));
    CHECK_FALSE(fired(v, detector_id::output_similarity));
    CHECK(v.allowed());
    CHECK(m.stats().user_messages == 2);
  }

  TEST_CASE("the same turns without the messages are a monologue") {
    ExecutionEconomicsManager m;
    m.on_text("I cannot remove a passenger from a reservation.");
    m.on_text("Let me look at your reservation first.");
    const verdict v = m.on_text("I cannot remove a passenger from a reservation.");
    CHECK(fired(v, detector_id::summary));
    CHECK(fired(v, detector_id::output_similarity));
  }

  TEST_CASE("call repeats count afresh after a message") {
    ExecutionEconomicsManager m;
    read_twice(m);
    m.on_user_message("Read it again, I changed it.");
    CHECK(step(m, "read_file", R"({"path":"a.py"})", true, "x = 1").allowed());
    read_twice(m);  // 3 since the message
    ExecutionEconomicsManager plain;
    read_twice(plain);
    CHECK(fired(step(plain, "read_file", R"({"path":"a.py"})", true, "x = 1"), detector_id::exact));
  }

  TEST_CASE("a failing-test streak restarts, the absolute cap does not") {
    loopguard::manager_config c;
    c.exact.absolute_cap = 4;
    ExecutionEconomicsManager m(c);
    for (int i = 0; i < 3; ++i) {
      CHECK(step(m, "read_file", R"({"path":"a.py"})", true, "x = " + std::to_string(i)).allowed());
      m.on_user_message("again");
    }
    const verdict v = step(m, "read_file", R"({"path":"a.py"})", true, "x = 9");
    REQUIRE(fired(v, detector_id::exact));
    CHECK(get(v, detector_id::exact).count == 4);
  }

  TEST_CASE("a loop that comes back after a message is the same loop: its ladder goes on") {
    loopguard::manager_config c;
    c.escalation.terminate_after = 2;
    ExecutionEconomicsManager m(c);
    read_twice(m);
    CHECK(step(m, "read_file", R"({"path":"a.py"})", true, "x = 1").action == action::nudge);
    m.on_user_message("try something else");
    read_twice(m);
    const verdict v = step(m, "read_file", R"({"path":"a.py"})", true, "x = 1");
    CHECK(get(v, detector_id::exact).occurrence == 2);
    CHECK(v.action == action::terminate);
  }

  TEST_CASE("a user message without content is an event of its own") {
    ExecutionEconomicsManager m;
    m.on_text("hello");
    const verdict v = m.on_user_message();
    CHECK(v.event_index == 1);
    CHECK(m.events() == 2);
  }
}

TEST_SUITE("resume") {
  TEST_CASE("the first call after a resume does not trip on streaks from before it") {
    ExecutionEconomicsManager m;
    read_twice(m);
    CHECK(m.on_resume().allowed());
    CHECK(step(m, "read_file", R"({"path":"a.py"})", true, "x = 1").allowed());
    CHECK(m.stats().resumes == 1);
  }

  TEST_CASE("a resume forgets loop episodes, a user message does not") {
    loopguard::manager_config c;
    c.escalation.terminate_after = 2;
    ExecutionEconomicsManager m(c);
    read_twice(m);
    CHECK(step(m, "read_file", R"({"path":"a.py"})", true, "x = 1").action == action::nudge);
    m.on_resume();
    read_twice(m);
    const verdict v = step(m, "read_file", R"({"path":"a.py"})", true, "x = 1");
    CHECK(get(v, detector_id::exact).occurrence == 1);
    CHECK(v.action == action::nudge);
  }

  TEST_CASE("limits go on across a resume") {
    loopguard::manager_config c;
    c.limit.max_iterations = 3;  // three turns run, the fourth is over the limit
    c.limit.warn_fraction = 1;
    ExecutionEconomicsManager m(c);
    m.on_text("one");
    m.on_text("two");
    m.on_text("three");
    m.on_resume();
    const verdict v = m.on_text("four");
    CHECK(fired(v, detector_id::limit));
  }

  TEST_CASE("an active swarm verdict still rejects after a resume and a user message") {
    ExecutionEconomicsManager m;
    loopguard::protocol::verdict pushed;
    pushed.swarm = "s";
    pushed.tool = "search";
    pushed.kind = "exact";
    pushed.fingerprint = loopguard::fingerprinter().of_call_text("search", R"({"q":"x"})").exact;
    pushed.level = severity::critical;
    pushed.calls = 9;
    pushed.workers = 3;
    pushed.message = "[Loopguard CRITICAL] swarm dead end";
    m.on_swarm_verdict(pushed);
    m.on_resume();
    m.on_user_message("go on");
    CHECK(m.on_tool_call_json("search", R"({"q":"x"})").action == action::reject);
  }
}
