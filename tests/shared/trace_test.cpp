#include <doctest/doctest.h>

#include <sstream>

#include "loopguard/trace.hpp"

using namespace loopguard;

namespace {
std::optional<trace_error> read(const std::string& text, trace& out) {
  std::istringstream in(text);
  return read_trace(in, out);
}
}  // namespace

TEST_SUITE("trace") {
  TEST_CASE("events, defaults and meta") {
    trace tr;
    const auto err =
        read(R"({"kind":"meta","name":"n","expect":{"loop":true,"within":3,"detector":"exact"}})"
             "\n\n"
             R"({"kind":"tool_call","tool":"bash","args":{"command":"ls"},"t":1.5,"note":"x"})"
             "\n"
             R"({"kind":"tool_result","tool":"bash","output":"","worker":"w2","swarm":"s"})"
             "\n"
             R"({"kind":"text","content":"hi"})",
             tr);
    REQUIRE_FALSE(err.has_value());
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

  TEST_CASE("bad lines name the line and what is wrong") {
    struct bad_case {
      const char* text;
      std::size_t line;
      const char* needle;
    };
    const bad_case cases[] = {
        {"{\"kind\":\"text\",\"content\":\"a\"}\nnot json", 2, "not valid JSON"},
        {"[1,2]", 1, "expected a JSON object"},
        {R"({"content":"x"})", 1, "\"kind\" is missing"},
        {R"({"kind":"bogus"})", 1, "unknown kind \"bogus\""},
        {R"({"kind":"tool_call","args":{}})", 1, "\"tool\" is missing"},
        {R"({"kind":"tool_call","tool":"t"})", 1, "\"args\" is missing"},
        {R"({"kind":"tool_call","tool":"t","args":[1]})", 1, "\"args\" must be an object"},
        {R"({"kind":"tool_result","tool":"t","output":"x","ok":"yes"})", 1, "\"ok\" must be"},
        {R"({"kind":"tool_result","tool":"t"})", 1, "\"output\" is missing"},
        {R"({"kind":"text","content":5})", 1, "\"content\" must be a string"},
        {R"({"kind":"text","content":"x","t":"now"})", 1, "\"t\" must be a number"},
        {R"({"kind":"text","content":"x","worker":1})", 1, "\"worker\" must be a string"},
        {R"({"kind":"meta","expect":{"loop":false,"within":2}})", 1, "\"expect.within\""},
        {R"({"kind":"meta","expect":{"within":2}})", 1, "\"expect.loop\""},
    };
    for (const auto& c : cases) {
      CAPTURE(c.text);
      trace tr;
      const auto err = read(c.text, tr);
      REQUIRE(err.has_value());
      CHECK(err->line == c.line);
      CHECK(err->message.find(c.needle) != std::string::npos);
    }
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
