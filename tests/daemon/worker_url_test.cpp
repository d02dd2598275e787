// The worker URL: /ws, and the swarm its query names (/ws?swarm=S).
#include <doctest/doctest.h>

#include "server/worker_url.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

std::string url_error(std::string_view target) {
  const auto r = url_swarm(target);
  return r ? "no error" : r.error().message();
}

}  // namespace

TEST_SUITE("worker url") {
  TEST_CASE("only /ws is the worker path, with or without a query") {
    CHECK(is_worker_path("/ws"));
    CHECK(is_worker_path("/ws?swarm=a"));
    CHECK_FALSE(is_worker_path("/"));
    CHECK_FALSE(is_worker_path("/ws/"));
    CHECK_FALSE(is_worker_path("/wsx"));
    CHECK_FALSE(is_worker_path("/dashboard?ws"));
  }

  TEST_CASE("the swarm of the query, percent-decoded, none without one") {
    CHECK(*url_swarm("/ws") == std::nullopt);
    CHECK(*url_swarm("/ws?") == std::nullopt);
    CHECK(*url_swarm("/ws?other=1") == std::nullopt);
    CHECK(*url_swarm("/ws?swarm=refactor-auth") == "refactor-auth");
    CHECK(*url_swarm("/ws?x=1&swarm=a%20b%2Fc&y") == "a b/c");
    CHECK(*url_swarm("/ws?swarm=a+b") == "a+b");  // RFC 3986: '+' is a plus sign
    CHECK(*url_swarm("/ws?swarm=%C3%A9t%C3%A9") == "\xC3\xA9t\xC3\xA9");
  }

  TEST_CASE("a malformed swarm in the query is an error saying what is wrong") {
    CHECK(url_error("/ws?swarm=a%2") ==
          "swarm in the URL: bad percent-encoding at byte 1 (expected % and two hex digits)");
    CHECK(url_error("/ws?swarm=%zz") ==
          "swarm in the URL: bad percent-encoding at byte 0 (expected % and two hex digits)");
    CHECK(url_error("/ws?swarm=") == "swarm in the URL is empty");
    CHECK(url_error("/ws?swarm") == "swarm in the URL is empty");
    CHECK(url_error("/ws?swarm=a&swarm=a") == "swarm is given twice in the URL");
    CHECK(url_error("/ws?swarm=" + std::string(129, 'x')) ==
          "swarm in the URL is longer than 128 bytes");
    CHECK(url_error("/ws?swarm=a%FF") ==
          "swarm in the URL is not valid UTF-8 (an identifier may not hold invalid bytes or "
          "U+FFFD)");
    CHECK(url_error("/ws?swarm=%EF%BF%BD") ==
          "swarm in the URL is not valid UTF-8 (an identifier may not hold invalid bytes or "
          "U+FFFD)");
  }

  TEST_CASE("percent_decode") {
    CHECK(*percent_decode("a%41%62") == "aAb");
    CHECK(*percent_decode("") == "");
    CHECK_FALSE(percent_decode("%").has_value());
    CHECK_FALSE(percent_decode("%4").has_value());
    CHECK_FALSE(percent_decode("%g1").has_value());
  }
}
