// The installed C++ SDK at work: a manager with the default rules sees the same tool call over
// and over and must stop allowing it. Exits 0 when it did, 1 (saying why) when it did not.
#include <cstdio>
#include <string>

#include <loopguard/execution_economics_manager.hpp>

int main() {
  loopguard::ExecutionEconomicsManager manager;
  for (int i = 1; i <= 12; ++i) {
    const std::string id = "call-" + std::to_string(i);
    const auto v = manager.on_tool_call_json("read_file", R"({"path": "config.yaml"})", id);
    if (!v.allowed()) {
      std::printf("call %d: %s (%s)\n", i, std::string(to_string(v.action)).c_str(),
                  std::string(to_string(v.strongest().detector)).c_str());
      return 0;
    }
    (void)manager.on_tool_result("read_file", true, "port: 8080", id);
  }
  std::fprintf(stderr, "12 identical calls were all allowed\n");
  return 1;
}
