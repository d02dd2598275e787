// Failing alike (worker-sdk/src/detectors/failure_signature.cpp; docs/detectors.md, "Failing
// alike"): here, a Python traceback cut before its exception line.
#include <doctest/doctest.h>

#include <string>

#include "detectors/failure_signature.hpp"

using loopguard::sdk::failed_alike;
using loopguard::sdk::failure_signature;

namespace {

// A traceback through the same deep frames, ending in `error` (or cut before it: "").
std::string traceback(int line, const std::string& error) {
  std::string out =
      "Traceback (most recent call last):\n  File \"repro.py\", line 21, in <module>\n";
  for (int i = 0; i < 30; ++i) {
    out += "  File \"/lib/sklearn/model_selection/_search.py\", line " + std::to_string(600 + i) +
           ", in fit\n    self._run_search(evaluate_candidates)\n";
  }
  out += "  File \"/lib/sklearn/neighbors/nca.py\", line " + std::to_string(line) +
         ", in _validate_params\n";
  if (!error.empty()) out += error + "\n";
  return out;
}

}  // namespace

TEST_SUITE("failure signature") {
  TEST_CASE("a traceback cut before its exception line is alike only to an equal one") {
    const std::string a = failure_signature(traceback(302, ""));
    const std::string b = failure_signature(traceback(322, ""));
    CHECK_FALSE(failed_alike(a, b, 80));  // the same frames, maybe two different errors
    CHECK(failed_alike(a, failure_signature(traceback(302, "")), 80));
    // With its exception line the same traceback is alike despite a moved line...
    const std::string c = failure_signature(traceback(302, "TypeError: `tol` must be float"));
    const std::string d = failure_signature(traceback(303, "TypeError: `tol` must be float"));
    CHECK(failed_alike(c, d, 80));
    // ...and one cut traceback against a whole one is not alike either.
    CHECK_FALSE(failed_alike(a, c, 80));
    // A threshold of 0 still makes every two failures alike.
    CHECK(failed_alike(a, b, 0));
  }

  TEST_CASE("a cut traceback is found after a long header too") {
    // pytest's session header before a crash's traceback: past the signature's first bytes.
    std::string header =
        "============================= test session starts ===========\n"
        "platform linux -- Python 3.9.20, pytest-6.0.0rc2, py-1.11.0\n"
        "rootdir: /testbed, configfile: pyproject.toml\ncollected 1 item\n\n";
    header += "reproduce_issue.py DEBUG: xfailed=None\n" + std::string(200, '.') + "\ns\n";
    const std::string a = failure_signature(header + traceback(302, ""));
    const std::string b = failure_signature(header + traceback(322, ""));
    CHECK_FALSE(failed_alike(a, b, 80));
  }

  TEST_CASE("a whole traceback followed by indented output is not a cut one") {
    // A handled traceback, then a warning quoting its source line (indented).
    const auto warned = [](int line) {
      return traceback(line, "KeyError: 'a'") + "handled\nw.py:3: UserWarning: deprecated\n" +
             "  x = f()\n";
    };
    CHECK(failed_alike(failure_signature(warned(302)), failure_signature(warned(303)), 80));
  }

  TEST_CASE("output that is not a cut traceback compares by similarity as before") {
    CHECK(failed_alike(failure_signature("error: No such file: a.txt\n"),
                       failure_signature("error: No such file: b.txt\n"), 80));
    // An indented last line without a traceback is no cut traceback.
    CHECK(failed_alike(failure_signature("make: *** [all] Error 2\n  see log\n"),
                       failure_signature("make: *** [all] Error 2\n  see log.\n"), 80));
  }
}
