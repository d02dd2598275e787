#include <doctest/doctest.h>

#include <sstream>

#include "loopguard/event_line.hpp"
#include "loopguard/trace.hpp"

using namespace loopguard;

namespace {
result<trace> read(const std::string& text) {
  std::istringstream in(text);
  return read_trace(in);
}
}  // namespace

TEST_SUITE("trace") {
  TEST_CASE("events, defaults and meta") {
    const auto read_back =
        read(R"({"kind":"meta","name":"n","expect":{"loop":true,"within":3,"detector":"exact"}})"
             "\n\n"
             R"({"kind":"tool_call","tool":"bash","args":{"command":"ls"},"t":1.5,"note":"x"})"
             "\n"
             R"({"kind":"tool_result","tool":"bash","output":"","worker":"w2","swarm":"s"})"
             "\n"
             R"({"kind":"text","content":"hi"})");
    REQUIRE(read_back.has_value());
    const trace& tr = *read_back;
    REQUIRE(tr.meta.has_value());
    CHECK(tr.meta->name == "n");
    REQUIRE(tr.meta->expect.has_value());
    CHECK(tr.meta->expect->loop);
    CHECK(tr.meta->expect->within == 3u);
    CHECK(tr.meta->expect->detector == "exact");
    REQUIRE(tr.events.size() == 3);
    CHECK(tr.events[0].kind == event_kind::tool_call);
    CHECK(tr.events[0].worker == "w0");
    CHECK(tr.events[0].swarm == "default");
    CHECK(tr.events[0].t == 1.5);
    CHECK(tr.events[0].line == 3);
    CHECK(tr.events[1].ok);
    CHECK(tr.events[1].worker == "w2");
    CHECK(tr.events[1].swarm == "s");
    CHECK(tr.events[2].content == "hi");
  }

  TEST_CASE("user (v1.1) and resume (v1.2) events") {
    const auto read_back = read(R"({"kind":"user","content":"Please go on"})"
                                "\n"
                                R"({"kind":"user"})"
                                "\n"
                                R"({"kind":"resume","worker":"w1"})");
    REQUIRE(read_back.has_value());
    REQUIRE(read_back->events.size() == 3);
    CHECK(read_back->events[0].kind == event_kind::user);
    CHECK(read_back->events[0].content == "Please go on");
    CHECK(read_back->events[1].kind == event_kind::user);
    CHECK(read_back->events[1].content.empty());
    CHECK(read_back->events[2].kind == event_kind::resume);
    CHECK(read_back->events[2].worker == "w1");
    CHECK(to_string(event_kind::user) == "user");
    CHECK(to_string(event_kind::resume) == "resume");
    const auto bad = read(R"({"kind":"user","content":3})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() == "1: content: expected a string, got 3");
  }

  TEST_CASE("a result's cost (v1.3): optional, read, written back, refused out of range") {
    const auto t = read(R"({"kind":"tool_result","tool":"search","output":"x",)"
                        R"("cost":{"tokens":17700,"amount":0.265}})"
                        "\n"
                        R"({"kind":"tool_result","tool":"search","output":"x","cost":{"tokens":5}})"
                        "\n"
                        R"({"kind":"tool_result","tool":"search","output":"x"})");
    REQUIRE(t.has_value());
    CHECK(t->events[0].cost == protocol::cost{17700, 0.265});
    CHECK(t->events[1].cost == protocol::cost{5, 0});
    CHECK(t->events[2].cost.empty());
    const std::string line = event_line(t->events[0]);
    CHECK(line.find(R"("cost":{"tokens":17700,"amount":0.265})") != std::string::npos);
    const auto back = parse_trace_line(line, 1);
    REQUIRE(back.has_value());
    CHECK(back->event->cost == t->events[0].cost);
    CHECK(event_line(t->events[2]).find("cost") == std::string::npos);
    const auto negative =
        read(R"({"kind":"tool_result","tool":"s","output":"x","cost":{"amount":-1}})");
    REQUIRE_FALSE(negative.has_value());
    CHECK(negative.error().message().starts_with("1: cost.amount: expected a number in 0.."));
    const auto not_object = read(R"({"kind":"tool_result","tool":"s","output":"x","cost":3})");
    REQUIRE_FALSE(not_object.has_value());
    CHECK(not_object.error().message().starts_with("1: cost"));
  }

  TEST_CASE("bad lines name the line and what is wrong") {
    struct bad_case {
      const char* text;
      const char* error;  // starts with the line number
    };
    const bad_case cases[] = {
        {"{\"kind\":\"text\",\"content\":\"a\"}\nnot json", "2: not valid JSON"},
        {"[1,2]", "1: line: expected an object, got [1,2]"},
        {R"({"content":"x"})",
         "1: kind: expected one of tool_call, tool_result, text, user, resume, meta, got nothing"},
        {R"({"kind":"bogus"})",
         R"(1: kind: expected one of tool_call, tool_result, text, user, resume, meta, got "bogus")"},
        {R"({"kind":"tool_call","args":{}})", "1: tool: expected a string, got nothing"},
        {R"({"kind":"tool_call","tool":"t"})", "1: args: expected an object, got nothing"},
        {R"({"kind":"tool_call","tool":"t","args":[1]})", "1: args: expected an object, got [1]"},
        {R"({"kind":"tool_result","tool":"t","output":"x","ok":"yes"})",
         R"(1: ok: expected true or false, got "yes")"},
        {R"({"kind":"tool_result","tool":"t"})", "1: output: expected a string, got nothing"},
        {R"({"kind":"text","content":5})", "1: content: expected a string, got 5"},
        {R"({"kind":"text","content":"x","t":"now"})", R"(1: t: expected a number, got "now")"},
        {R"({"kind":"text","content":"x","worker":1})", "1: worker: expected a string, got 1"},
        {R"({"kind":"meta","expect":{"loop":false,"within":2}})",
         R"(1: expect.within: expected no value unless "loop" is true, got 2)"},
        {R"({"kind":"meta","expect":{"within":2}})",
         "1: expect.loop: expected true or false, got nothing"},
        {R"({"kind":"meta","expect":{"loop":true,"within":2.5}})",
         "1: expect.within: expected a non-negative integer, got 2.5"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.text);
      const auto tr = read(c.text);
      REQUIRE_FALSE(tr.has_value());
      CHECK(tr.error().message().starts_with(c.error));
    }
  }

  TEST_CASE("within 3.0 is the integer 3 (json_fields' rule)") {
    const auto tr = read(R"({"kind":"meta","expect":{"loop":true,"within":3.0}})");
    REQUIRE(tr.has_value());
    CHECK(tr->meta->expect->within == 3u);
  }

  TEST_CASE("results pair by id, else with the oldest open call of that tool and worker") {
    call_pairing p;
    const auto ev = [](event_kind k, std::string tool, std::string id, std::string worker = "w0") {
      trace_event e;
      e.kind = k;
      e.tool = std::move(tool);
      e.id = std::move(id);
      e.worker = std::move(worker);
      return e;
    };
    const auto a = ev(event_kind::tool_call, "read", "");
    const auto b = ev(event_kind::tool_call, "read", "");
    const auto c = ev(event_kind::tool_call, "grep", "c1");
    p.on_call(a, 0);
    p.on_call(b, 1);
    p.on_call(c, 2);
    const auto rc = ev(event_kind::tool_result, "grep", "c1");
    CHECK(p.on_result(rc) == 2u);
    const auto r = ev(event_kind::tool_result, "read", "");
    CHECK(p.on_result(r) == 0u);
    CHECK(p.on_result(r) == 1u);
    CHECK_FALSE(p.on_result(r).has_value());
    const auto other_worker = ev(event_kind::tool_call, "read", "", "w9");
    p.on_call(other_worker, 5);
    CHECK_FALSE(p.on_result(r).has_value());
  }
}
