#include <doctest/doctest.h>

#include <string>

#include "server/token_table.hpp"

using namespace loopguard::daemon;

namespace {

// The error of parsing `text` as file "tokens", or "" when it parses.
std::string parse_error(const std::string& text) {
  const auto t = token_table::parse(text, "tokens");
  return t ? std::string() : t.error().message();
}

}  // namespace

TEST_SUITE("token table") {
  TEST_CASE("glob patterns: star matches any run, everything else itself") {
    CHECK(glob_match("nightly-*", "nightly-7"));
    CHECK(glob_match("nightly-*", "nightly-"));
    CHECK_FALSE(glob_match("nightly-*", "nightly"));
    CHECK_FALSE(glob_match("nightly-*", "xnightly-7"));
    CHECK(glob_match("*", ""));
    CHECK(glob_match("*", "anything"));
    CHECK(glob_match("exact", "exact"));
    CHECK_FALSE(glob_match("exact", "exact2"));
    CHECK_FALSE(glob_match("exact", "exac"));
    CHECK(glob_match("a*b*c", "a-b-b-c"));
    CHECK(glob_match("a*b*c", "abc"));
    CHECK_FALSE(glob_match("a*b*c", "a-c-b"));
    CHECK(glob_match("*-run-*", "replay-run-12"));
    CHECK(glob_match("team/*", "team/équipe"));
    CHECK_FALSE(glob_match("", "x"));
    CHECK(glob_match("", ""));
  }

  TEST_CASE("a tokens file: grants per line, comments, names") {
    const auto t = token_table::parse(
        "# ops\n"
        "admin-token-0123456789 admin name=ops\n"
        "\n"
        "  nightly-token-0123456 swarm=nightly-* complete\r\n"
        "pinned-token-012345678\tswarm=refactor-auth worker=w1 worker=w2\n",
        "tokens");
    REQUIRE(t.has_value());
    CHECK(t->size() == 3);
    const auto* admin = t->find("admin-token-0123456789");
    REQUIRE(admin != nullptr);
    CHECK(admin->name == "ops");
    CHECK(admin->grants_swarm("any"));
    CHECK(admin->grants_worker("any"));
    CHECK(admin->may_complete());
    const auto* nightly = t->find("nightly-token-0123456");
    REQUIRE(nightly != nullptr);
    CHECK(nightly->name == "tokens:4");
    CHECK(nightly->grants_swarm("nightly-12"));
    CHECK_FALSE(nightly->grants_swarm("refactor-auth"));
    CHECK(nightly->grants_worker("whoever"));
    CHECK(nightly->may_complete());
    CHECK_FALSE(nightly->admin);
    const auto* pinned = t->find("pinned-token-012345678");
    REQUIRE(pinned != nullptr);
    CHECK(pinned->grants_swarm("refactor-auth"));
    CHECK_FALSE(pinned->grants_swarm("refactor-auth-2"));
    CHECK(pinned->grants_worker("w2"));
    CHECK_FALSE(pinned->grants_worker("w3"));
    CHECK_FALSE(pinned->may_complete());
    CHECK(t->find("pinned-token-01234567") == nullptr);  // a prefix is not the token
    CHECK(t->find("") == nullptr);
  }

  TEST_CASE("a tokens file's errors name the line and never the token") {
    CHECK(parse_error("") == "tokens: the tokens file holds no token");
    CHECK(parse_error("# only a comment\n") == "tokens: the tokens file holds no token");
    CHECK(parse_error("short admin\n") ==
          "tokens:1: the token is shorter than 16 characters (make one with: openssl rand -hex "
          "32)");
    CHECK(parse_error("\nlong-enough-token-000\n") ==
          "tokens:2: the token grants nothing: give swarm=PATTERN or admin");
    CHECK(parse_error("long-enough-token-000 swarm=a wroker=b\n") ==
          "tokens:1: unknown grant \"wroker=...\" (known: swarm=PATTERN, worker=NAME, complete, "
          "admin, name=LABEL)");
    // A second token on the line is never shown.
    const auto second = parse_error("long-enough-token-000 swarm=a another-secret-token-1\n");
    CHECK(second ==
          "tokens:1: word 3 is not a grant (it is not shown: it could be a token) (known: "
          "swarm=PATTERN, worker=NAME, complete, admin, name=LABEL)");
    CHECK(parse_error("long-enough-token-000 swarm=\n") == "tokens:1: swarm= needs a value");
    CHECK(parse_error("long-enough-token-000 swarm=" + std::string(129, 'x') + "\n") ==
          "tokens:1: swarm= is longer than 128 bytes");
    CHECK(parse_error("long-enough-token-000 swarm=\xff\n") ==
          "tokens:1: swarm= is not valid UTF-8");
    CHECK(parse_error("long-enough-token-000 admin swarm=a\n") ==
          "tokens:1: an admin token grants every swarm and worker: drop swarm= and worker=");
    CHECK(parse_error("long-enough-token-\x01\x30\x30 admin\n") ==
          "tokens:1: a token is printable ASCII without spaces");
    const auto dup =
        parse_error("long-enough-token-000 admin name=a\nlong-enough-token-000 swarm=x\n");
    CHECK(dup == "tokens:2: the same token is already on the line of \"a\"");
    CHECK(dup.find("long-enough") == std::string::npos);
  }

  TEST_CASE("the single token file joins as an admin, a token in both is refused") {
    auto t = token_table::parse("worker-token-00000001 swarm=a\n", "tokens");
    REQUIRE(t.has_value());
    CHECK(t->add(token_table::single_admin("legacy")).ok());
    REQUIRE(t->find("legacy") != nullptr);
    CHECK(t->find("legacy")->admin);
    const auto again = t->add(token_table::single_admin("worker-token-00000001"));
    CHECK(again.message() == "the token of \"token_file\" is also the one of \"tokens:1\"");
  }
}
