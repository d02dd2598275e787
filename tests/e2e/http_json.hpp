// The daemon's HTTP API as the e2e tests read it (test::http_get, ws_client.hpp).
#pragma once

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ws_client.hpp"

namespace loopguard::test {

// GET `target`, which must answer `expect`; its body as JSON (discarded when it is not).
inline nlohmann::json get_json(unsigned short port, const std::string& target, int expect = 200) {
  std::string body;
  REQUIRE(http_get(port, target, body) == expect);
  return nlohmann::json::parse(body, nullptr, false);
}

// The swarm's digest as the daemon reports it, or "HTTP <status>" when it does not.
inline std::string digest_over_http(unsigned short port, const std::string& swarm) {
  std::string body;
  const int status = http_get(port, "/api/swarms/" + swarm + "/digest", body);
  if (status != 200) return "HTTP " + std::to_string(status);
  return nlohmann::json::parse(body, nullptr, false).value("digest", "");
}

}  // namespace loopguard::test
