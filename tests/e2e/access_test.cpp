// Per-swarm tokens against the real loopguardd (docs/operations.md, "Access"): a worker's
// identity is bound to what its token grants (swarm patterns, pinned worker names),
// swarm_complete needs its own grant, and only an admin token reads the HTTP API.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include "../daemon/test_util.hpp"
#include "cli_process.hpp"
#include "daemon_process.hpp"
#include "loopguard/protocol.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::http_request;
using test::ws_client;

namespace {

constexpr const char* kAdmin = "admin-token-000000000001";
constexpr const char* kNightly = "nightly-token-0000000001";  // nightly-*, may complete
constexpr const char* kPinned = "pinned-token-00000000001";   // swarm "auth", workers w1, w2
constexpr const char* kRuns = "runs-token-0000000000001";     // replay's and simulate's run ids

std::string tokens_file(const test::temp_dir& dir, mode_t mode = 0600) {
  const auto path = dir.file("tokens");
  std::ofstream(path) << "# test tokens\n"
                      << kAdmin << " admin name=ops\n"
                      << kNightly << " swarm=nightly-* complete name=nightly\n"
                      << kPinned << " swarm=auth worker=w1 worker=w2\n"
                      << kRuns << " swarm=*~r* name=runs\n";
  ::chmod(path.c_str(), mode);
  return path;
}

json token_hello(const std::string& swarm, const std::string& worker, const std::string& token) {
  return {{"type", "hello"},  {"version", protocol::kVersion}, {"swarm", swarm},
          {"worker", worker}, {"incarnation", "inc"},          {"token", token}};
}

// The hello's answer: "welcome", or the error's code (the connection then closes with 1008).
std::string answer_to(unsigned short port, const json& h, std::string* message = nullptr) {
  ws_client c(port);
  c.send(h);
  const auto m = c.next(5s);
  if (!m) return "nothing";
  if ((*m)["type"] == "welcome") return "welcome";
  if (message != nullptr) *message = (*m)["message"];
  CHECK(c.wait_closed(5s) == 1008);
  return (*m)["code"];
}

json events(std::uint64_t from, std::uint64_t to) {
  protocol::events b;
  for (auto s = from; s <= to; ++s) b.items.push_back(test::wire_event(s, 7, double(s), 77));
  return json::parse(protocol::serialize(b));
}

int api_status(unsigned short port, const std::string& path, const std::string& token) {
  return http_request(port, "GET", path, {{"Authorization", "Bearer " + token}}).status;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("access: a token grants its swarms and pinned worker names, nothing else" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--tokens-file", tokens_file(dir)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto p = d.port();
    CHECK(answer_to(p, token_hello("anything", "w9", kAdmin)) == "welcome");
    CHECK(answer_to(p, token_hello("nightly-7", "w9", kNightly)) == "welcome");
    CHECK(answer_to(p, token_hello("auth", "w2", kPinned)) == "welcome");
    CHECK(answer_to(p, token_hello("release-1~r0a1b", "w1", kRuns)) == "welcome");

    std::string why;
    CHECK(answer_to(p, token_hello("auth", "w1", kNightly), &why) == "forbidden");
    CHECK(why == "the token \"nightly\" does not grant swarm \"auth\"");
    // One process cannot pose as more workers than its token names.
    CHECK(answer_to(p, token_hello("auth", "w3", kPinned), &why) == "forbidden");
    CHECK(why == "the token \"" + dir.file("tokens") + ":4\" does not grant worker name \"w3\"");
    // The dash is literal.
    CHECK(answer_to(p, token_hello("nightly", "w1", kNightly)) == "forbidden");
    CHECK(answer_to(p, token_hello("auth", "w1", "wrong-token"), &why) == "unauthorized");
    CHECK(why == "missing or wrong token");
    CHECK(answer_to(p, token_hello("auth", "w1", "")) == "unauthorized");
    // No token in any message or log line.
    for (const char* t : {kAdmin, kNightly, kPinned, kRuns}) {
      CHECK(d.log().find(t) == std::string::npos);
    }
    CHECK(d.log().find("code=forbidden") != std::string::npos);  // refusals are logged
  }

  TEST_CASE("access: swarm_complete needs the complete grant, and a refusal keeps the state" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--tokens-file", tokens_file(dir)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto p = d.port();
    ws_client w1(p), w2(p);
    REQUIRE(w1.hello("auth", "w1", "inc", kPinned).has_value());
    REQUIRE(w2.hello("auth", "w2", "inc", kPinned).has_value());
    w1.send(events(1, 4));
    REQUIRE(w1.wait_ack(4, 5s));
    w2.send(json{{"type", "swarm_complete"}, {"swarm", "auth"}});
    const auto refused = w2.next_of("error", 5s);
    REQUIRE(refused.has_value());
    CHECK((*refused)["code"] == "forbidden");
    CHECK((*refused)["message"] ==
          "this token may not end a swarm: swarm_complete needs a token with the grant "
          "`complete` (or an admin token)");
    CHECK(w2.wait_closed(5s) == 1008);
    CHECK(w1.received("swarm_complete").empty());
    CHECK(api_status(p, "/api/swarms/auth", kAdmin) == 200);  // nothing was erased

    ws_client n1(p), n2(p);
    REQUIRE(n1.hello("nightly-3", "a", "inc", kNightly).has_value());
    REQUIRE(n2.hello("nightly-3", "b", "inc", kNightly).has_value());
    n1.send(events(1, 2));
    REQUIRE(n1.wait_ack(2, 5s));
    n2.send(json{{"type", "swarm_complete"}, {"swarm", "nightly-3"}});
    CHECK(n1.next_of("swarm_complete", 5s).has_value());
    CHECK(api_status(p, "/api/swarms/nightly-3", kAdmin) == 404);
  }

  TEST_CASE("access: only the admin token reads the API and signs in to the dashboard" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--tokens-file", tokens_file(dir)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto p = d.port();
    ws_client w(p);
    REQUIRE(w.hello("nightly-1", "a", "inc", kNightly).has_value());
    w.send(events(1, 2));
    REQUIRE(w.wait_ack(2, 5s));
    CHECK(api_status(p, "/api/swarms", kAdmin) == 200);
    CHECK(api_status(p, "/api/swarms/nightly-1", kAdmin) == 200);
    // A worker's token reads no swarm, not even its own.
    const auto worker = http_request(p, "GET", "/api/swarms/nightly-1",
                                     {{"Authorization", std::string("Bearer ") + kNightly}});
    CHECK(worker.status == 403);
    CHECK(worker.body.find("a worker's token") != std::string::npos);
    CHECK(api_status(p, "/api/swarms", "wrong") == 401);
    const auto login = [p](const char* token) {
      return http_request(p, "POST", "/api/login", {{"Content-Type", "application/json"}},
                          json{{"token", token}}.dump());
    };
    CHECK(login(kPinned).status == 403);
    CHECK(login(kPinned).header("Set-Cookie").empty());
    CHECK(login("wrong").status == 401);
    CHECK(login(kAdmin).status == 204);
    std::string body;
    CHECK(test::try_upgrade(p, "/api/live", {{"Authorization", std::string("Bearer ") + kRuns}},
                            body) == 403);
    // loopguard inspect says which kind of token it needs.
    const std::string url = "http://127.0.0.1:" + std::to_string(p);
    const auto as_worker =
        test::run_loopguard(dir.file(""), {"inspect", "--daemon", url, "--token", kNightly});
    CHECK(as_worker.exit == 3);
    CHECK(as_worker.err.find("(403 Forbidden): the API takes an admin token, --token is a "
                             "worker's") != std::string::npos);
    const auto as_admin =
        test::run_loopguard(dir.file(""), {"inspect", "--daemon", url, "--token", kAdmin});
    CHECK_MESSAGE(as_admin.exit == 0, as_admin.err);
    CHECK(as_admin.out.find("nightly-1") != std::string::npos);
  }

  TEST_CASE("access: a tokens file others may read, or with a bad line, stops the start" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    std::string out;
    CHECK(test::run_loopguardd(dir.file(""),
                               {"--tokens-file", tokens_file(dir, 0640), "--db", dir.file("a.db")},
                               out, 10s) == 2);
    CHECK(out.find("may be read by others (mode 0640)") != std::string::npos);
    const auto bad = dir.file("bad-tokens");
    std::ofstream(bad) << kAdmin << " admin\n" << kNightly << " swarm=x wrkr=y\n";
    ::chmod(bad.c_str(), 0600);
    CHECK(test::run_loopguardd(dir.file(""), {"--tokens-file", bad, "--db", dir.file("b.db")}, out,
                               10s) == 2);
    CHECK(out.find(bad + ":2: unknown grant \"wrkr=...\"") != std::string::npos);
    CHECK(out.find(kNightly) == std::string::npos);
    // With tokens, other addresses may be served (the test binds none: port 0 on loopback is
    // what it runs; the refusal without tokens is in operations_test).
  }

  TEST_CASE("access: replay --daemon and simulate run under one token granting run ids" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--tokens-file", tokens_file(dir)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string url = "ws://127.0.0.1:" + std::to_string(d.port());
    const std::string trace =
        std::string(LOOPGUARD_TEST_DATA_DIR) + "/traces/swarm-global-doom-loop.jsonl";
    const auto replay =
        test::run_loopguard(dir.file(""), {"replay", "--daemon", url, "--token", kRuns, trace});
    CHECK_MESSAGE(replay.exit == 0, replay.err);
    const auto sim = test::run_loopguard(
        dir.file(""), {"simulate", "--daemon", url, "--token", kRuns, "--workers", "3", "--stuck",
                       "2", "--rate", "20", "--duration", "1"});
    CHECK_MESSAGE(sim.exit == 0, sim.err);
    CHECK(sim.out.find("w1 stuck: sent 20, acknowledged 20") != std::string::npos);
    // A fixed swarm id outside the token's pattern is refused, and said so in one line.
    const auto outside = test::run_loopguard(
        dir.file(""), {"simulate", "--daemon", url, "--token", kRuns, "--swarm", "prod",
                       "--workers", "1", "--stuck", "0", "--duration", "1"});
    CHECK(outside.exit != 0);
    CHECK(outside.err.find("forbidden: the token \"runs\" does not grant swarm \"prod\"") !=
          std::string::npos);
  }
}
