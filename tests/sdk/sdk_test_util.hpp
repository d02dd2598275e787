// Small helpers for driving a manager in tests.
#pragma once

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "loopguard/execution_economics_manager.hpp"
#include "loopguard/presets.hpp"

namespace lgtest {

using loopguard::ExecutionEconomicsManager;
using loopguard::verdict;

inline loopguard::manager_config preset(const char* name) {
  auto p = loopguard::preset(name);
  REQUIRE(p.has_value());
  return *p;
}

// A call and its result in one go; returns the call's verdict.
inline verdict step(ExecutionEconomicsManager& m, const std::string& tool, const std::string& args,
                    bool ok, const std::string& output) {
  verdict v = m.on_tool_call_json(tool, args);
  m.on_tool_result(tool, ok, output);
  return v;
}

inline bool fired(const verdict& v, loopguard::detector_id d) {
  for (const auto& x : v.detections) {
    if (x.detector == d) return true;
  }
  return false;
}

// The detection of rule `d` in `v`; fails the test case when there is none.
inline const loopguard::detection& get(const verdict& v, loopguard::detector_id d) {
  for (const auto& x : v.detections) {
    if (x.detector == d) return x;
  }
  FAIL("no detection of " << loopguard::to_string(d));
  throw std::logic_error("unreachable");
}

}  // namespace lgtest
