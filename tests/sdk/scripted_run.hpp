// One scripted agent run that trips most local rules (exact repeats up to a rejection, test_fix,
// bash_cascade, result, cycle, summary, output_similarity, content, the wall-time limit), with
// user messages, a resume and strings that are not valid UTF-8. For the recorder's tests: the
// run is recorded, replayed, and the detection lines compared.
//
// `Guard` is anything with the manager's event methods (ExecutionEconomicsManager,
// swarm_worker, a recording wrapper). `now` is the clock the guard and the recorder read; each
// event moves it 1.5 s on. The agent follows the verdicts' actions: a rejected call does not
// run, a terminated run stops (in observe mode nothing is rejected or stopped).
#pragma once

#include <string>

#include "loopguard/config.hpp"
#include "loopguard/verdict.hpp"

namespace lgtest {

// The scripted run's configuration: balanced with a wall-time limit that the run reaches.
inline loopguard::manager_config scripted_config(
    loopguard::guard_mode mode = loopguard::guard_mode::enforce) {
  loopguard::manager_config c;
  c.mode = mode;
  c.limit.max_wall_seconds = 90;
  return c;
}

template <class Guard>
class scripted_run {
 public:
  scripted_run(Guard& g, double& now) : g_(g), now_(now) {}

  // Returns false when the run was terminated.
  bool run() {
    return text("I will look at the failing test first.") && repeat_test() && reads() &&
           user("Please try another approach.") && oscillate() && monologue() && chant() &&
           resume() && cascade() && odd_bytes() && reads();
  }

 private:
  bool ok(const loopguard::verdict& v) { return v.action != loopguard::action::terminate; }
  void tick() { now_ += 1.5; }

  bool text(const std::string& content) {
    tick();
    return ok(g_.on_text(content));
  }
  bool user(const std::string& content) {
    tick();
    return ok(g_.on_user_message(content));
  }
  bool resume() {
    tick();
    return ok(g_.on_resume());
  }
  // A call and, unless it is rejected, its result. False when the run was terminated.
  bool call(const std::string& tool, const std::string& args, bool success,
            const std::string& output, const std::string& id = {}) {
    tick();
    const loopguard::verdict v = g_.on_tool_call_json(tool, args, id);
    if (!ok(v)) return false;
    if (v.action == loopguard::action::reject) return true;
    tick();
    return ok(g_.on_tool_result(tool, success, output, id));
  }

  bool repeat_test() {
    for (int i = 0; i < 7; ++i) {
      if (!call("bash", R"({"command":"pytest tests/test_auth.py"})", false,
                "FAILED tests/test_auth.py::test_token - AssertionError\n1 failed",
                "t" + std::to_string(i))) {
        return false;
      }
    }
    return true;
  }
  bool reads() {
    for (int i = 0; i < 3; ++i) {
      if (!call("read_file", R"({"path":"src/f)" + std::to_string(i) + R"(.py"})", true,
                "contents " + std::to_string(i))) {
        return false;
      }
    }
    return true;
  }
  bool oscillate() {
    for (int i = 0; i < 4; ++i) {
      if (!call("edit", R"({"path":"a.py","text":"x = 1"})", true, "ok") ||
          !call("edit", R"({"path":"a.py","text":"x = 2"})", true, "ok")) {
        return false;
      }
    }
    return true;
  }
  bool monologue() {
    for (int i = 0; i < 4; ++i) {
      if (!text("I am not sure what to do next. Let me think about it again.")) return false;
    }
    return true;
  }
  bool chant() {
    std::string s = "Working on it. ";
    for (int i = 0; i < 14; ++i) s += "The answer is forty-two and nothing else matters here. ";
    return text(s);
  }
  bool cascade() {
    for (const char* f : {"a.txt", "b.txt", "c.txt", "d.txt"}) {
      if (!call("bash", std::string(R"({"command":"cat missing/)") + f + R"("})", false,
                std::string("cat: missing/") + f + ": No such file or directory")) {
        return false;
      }
    }
    return true;
  }
  bool odd_bytes() {
    const std::string bad = "caf\xC3\x28 \xFF\xFE end";
    return call("lookup\xE2\x82", R"({"q":"caf\u00e9"})", true, bad) &&
           call("lookup\xE2\x82", R"({"q":"caf\u00e9"})", true, bad) &&
           text("Done with \xF0\x9F\x98 this.");
  }

  Guard& g_;
  double& now_;
};

}  // namespace lgtest
