// Operating loopguardd (docs/operations.md): access to the HTTP side (token, session cookie,
// Origin), the dashboard's live socket, readiness, the log lines and the configuration, all
// against the real daemon on a loopback port.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "../daemon/test_util.hpp"
#include "child_process.hpp"
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

constexpr const char* kToken = "t0ken-for-tests";

std::string write_token(const test::temp_dir& dir, const std::string& name, const std::string& t) {
  const auto path = dir.file(name);
  std::ofstream(path) << t << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

json dead_end_batch(std::uint64_t from, std::uint64_t to) {
  protocol::events b;
  for (auto s = from; s <= to; ++s) b.items.push_back(test::wire_event(s, 7, double(s), 77));
  return json::parse(protocol::serialize(b));
}

json hello(const std::string& swarm, const std::string& worker, const std::string& token) {
  json h{{"type", "hello"},
         {"version", protocol::kVersion},
         {"swarm", swarm},
         {"worker", worker},
         {"incarnation", "inc"}};
  if (!token.empty()) h["token"] = token;
  return h;
}

// Three workers of `swarm` repeat one call until a verdict is declared.
void feed_dead_end(unsigned short port, const std::string& swarm, const std::string& token = "") {
  std::vector<std::unique_ptr<ws_client>> ws;
  for (int i = 0; i < 3; ++i) {
    ws.push_back(std::make_unique<ws_client>(port));
    ws.back()->send(hello(swarm, test::worker_name(i), token));
    REQUIRE(ws.back()->next_of("welcome", 5s).has_value());
  }
  for (auto& c : ws) c->send(dead_end_batch(1, 4));
  for (auto& c : ws) REQUIRE(c->wait_ack(4, 5s));
}

std::string session_cookie(const test::http_answer& a) {
  const auto set = a.header("Set-Cookie");
  const auto semi = set.find(';');
  return set.substr(0, semi);  // loopguard_session=<id>
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "operations: with a token the API needs a bearer or the login cookie, health and "
      "readiness stay open" *
      doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--token-file", write_token(dir, "token", kToken)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto p = d.port();
    CHECK(http_request(p, "GET", "/healthz").status == 200);
    const auto ready = http_request(p, "GET", "/readyz");
    CHECK(ready.status == 200);
    CHECK(ready.body == "ready\n");
    CHECK(http_request(p, "GET", "/metrics").status == 200);  // no metrics token: open

    const auto refused = http_request(p, "GET", "/api/swarms");
    CHECK(refused.status == 401);
    CHECK(refused.header("WWW-Authenticate").starts_with("Bearer"));
    CHECK(http_request(p, "GET", "/api/swarms", {{"Authorization", "Bearer wrong"}}).status == 401);
    CHECK(
        http_request(p, "GET", "/api/swarms", {{"Authorization", std::string("Bearer ") + kToken}})
            .status == 200);

    // The browser's way: the token once, then the cookie.
    const json login{{"token", kToken}};
    CHECK(http_request(p, "POST", "/api/login", {{"Content-Type", "application/json"}},
                       R"({"token":"nope"})")
              .status == 401);
    CHECK(http_request(p, "POST", "/api/login", {{"Content-Type", "text/plain"}}, login.dump())
              .status == 415);
    CHECK(http_request(p, "POST", "/api/login",
                       {{"Content-Type", "application/json"}, {"Origin", "http://evil.example"}},
                       login.dump())
              .status == 403);
    const auto in =
        http_request(p, "POST", "/api/login", {{"Content-Type", "application/json"}}, login.dump());
    REQUIRE(in.status == 204);
    const auto set = in.header("Set-Cookie");
    CHECK(set.find("HttpOnly") != std::string::npos);
    CHECK(set.find("SameSite=Strict") != std::string::npos);
    CHECK(set.find(kToken) == std::string::npos);  // a session id, never the token
    const auto cookie = session_cookie(in);
    const auto session = http_request(p, "GET", "/api/session", {{"Cookie", cookie}});
    CHECK(session.status == 200);
    CHECK(json::parse(session.body)["auth"] == "cookie");
    CHECK(http_request(p, "GET", "/api/swarms", {{"Cookie", "other=1; " + cookie}}).status == 200);
    CHECK(http_request(p, "GET", "/api/swarms", {{"Cookie", "loopguard_session=forged"}}).status ==
          401);
    CHECK(http_request(p, "POST", "/api/logout", {{"Cookie", cookie}}).status == 204);
    CHECK(http_request(p, "GET", "/api/swarms", {{"Cookie", cookie}}).status == 401);
  }

  TEST_CASE("operations: /metrics behind its own token" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--metrics-token-file", write_token(dir, "mtoken", "scrape-me")});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    CHECK(http_request(d.port(), "GET", "/metrics").status == 401);
    const auto m =
        http_request(d.port(), "GET", "/metrics", {{"Authorization", "Bearer scrape-me"}});
    CHECK(m.status == 200);
    CHECK(m.body.find("loopguard_ack_latency_seconds_bucket") != std::string::npos);
    CHECK(http_request(d.port(), "GET", "/api/swarms").status == 200);  // no API token: open
  }

  TEST_CASE("operations: the live socket sends snapshots as the swarm changes, same origin only" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--token-file", write_token(dir, "token", kToken)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto p = d.port();
    const std::string host = "127.0.0.1:" + std::to_string(p);
    std::string body;
    CHECK(test::try_upgrade(p, "/api/live", {}, body) == 401);
    const auto cookie =
        session_cookie(http_request(p, "POST", "/api/login", {{"Content-Type", "application/json"}},
                                    json{{"token", kToken}}.dump()));
    CHECK(test::try_upgrade(p, "/api/live", {{"Cookie", cookie}, {"Origin", "http://evil.example"}},
                            body) == 403);

    ws_client live(p, "/api/live", {{"Cookie", cookie}, {"Origin", "http://" + host}});
    const auto first = live.next_of("snapshot", 5s);
    REQUIRE(first.has_value());
    CHECK((*first)["swarms"].empty());
    CHECK((*first)["swarm"].is_null());
    live.send(json{{"type", "select"}, {"swarm", "ops"}});
    REQUIRE(live.next_of("snapshot", 5s).has_value());  // answered at once, still empty

    feed_dead_end(p, "ops", kToken);
    // Without asking again: a snapshot with the verdict and the top fingerprint arrives.
    std::optional<json> seen;
    for (int i = 0; i < 40 && !seen; ++i) {
      auto s = live.next_of("snapshot", 2s);
      if (s && (*s)["swarm"].is_object() && !(*s)["swarm"]["verdicts"].empty()) seen = s;
    }
    REQUIRE(seen.has_value());
    const json& swarm = (*seen)["swarm"];
    CHECK(swarm["swarm"] == "ops");
    CHECK(swarm["verdicts"][0]["tool"] == "search");
    CHECK(swarm["top"][0]["tool"] == "search");
    CHECK(swarm["top"][0]["workers"] == 3);
    CHECK((*seen)["swarms"][0]["swarm"] == "ops");
  }

  TEST_CASE("operations: connected workers in the API" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    ws_client a(d.port()), b(d.port());
    REQUIRE(a.hello("c", "alice", "inc") == 0u);
    REQUIRE(b.hello("c", "bob", "inc") == 0u);
    a.send(dead_end_batch(1, 1));
    REQUIRE(a.wait_ack(1, 5s));
    std::string body;
    REQUIRE(test::http_get(d.port(), "/api/swarms/c", body) == 200);
    CHECK(json::parse(body)["connected"] == json{"alice", "bob"});
    REQUIRE(test::http_get(d.port(), "/api/swarms", body) == 200);
    CHECK(json::parse(body)["swarms"][0]["connected"] == 2);
  }

  TEST_CASE(
      "operations: JSON log lines name the swarm, worker and fingerprint of a verdict and "
      "the peer of a refused connection" *
      doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--log-format", "json", "--token-file", write_token(dir, "token", kToken)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    feed_dead_end(d.port(), "logged", kToken);
    {
      ws_client intruder(d.port());
      intruder.send(hello("logged", "mallory", "guess"));
      CHECK(intruder.wait_closed(5s).has_value());
    }
    d.signal(SIGTERM);
    REQUIRE(d.wait(10s) == 0);
    std::istringstream lines(d.log());
    std::string line;
    bool verdict = false, refused = false;
    int parsed = 0;
    while (std::getline(lines, line)) {
      if (line.starts_with("loopguardd listening")) continue;  // stdout shares the test's file
      const auto j = json::parse(line, nullptr, false);
      REQUIRE_MESSAGE(j.is_object(), "not a JSON line: " << line);
      ++parsed;
      CHECK(j.contains("time"));
      CHECK(j.contains("level"));
      CHECK(j.contains("msg"));
      CHECK(line.find(kToken) == std::string::npos);  // never logged
      // Each key once: a field never shadows the line's own `level`.
      CHECK(line.find("\"level\":") == line.rfind("\"level\":"));
      if (j["event"] == "verdict") {
        verdict = true;
        CHECK(j["level"] == "warning");
        CHECK(j["severity"] == "warn");
        CHECK(j["swarm"] == "logged");
        CHECK(j["tool"] == "search");
        CHECK(j["fingerprint"].get<std::string>().size() == 16);
        CHECK(j["worker"].get<std::string>().starts_with("w"));
      }
      if (j["event"] == "refused") {
        refused = true;
        CHECK(j["code"] == "unauthorized");
        CHECK(j["worker"] == "mallory");
        CHECK(j["peer"].get<std::string>().starts_with("127.0.0.1:"));
      }
    }
    CHECK(parsed >= 4);  // restored, listening, verdict, refused, stopping, stopped
    CHECK(verdict);
    CHECK(refused);
  }

  TEST_CASE("operations: a storm of refused connections writes at most a burst of lines" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--token-file", write_token(dir, "token", kToken)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    for (int i = 0; i < 60; ++i) {
      ws_client c(d.port());
      c.send(hello("s", "w", ""));
      CHECK(c.wait_closed(5s).has_value());
    }
    d.signal(SIGTERM);
    REQUIRE(d.wait(10s) == 0);
    const auto log = d.log();
    std::size_t refused = 0;
    for (auto at = log.find("refused:"); at != std::string::npos; at = log.find("refused:", at + 1))
      ++refused;
    // One window of 10 s normally; a loaded machine may cross into a second one.
    CHECK(refused >= 20);
    CHECK(refused <= 40);
    std::size_t held = 0;
    const std::regex held_back(R"(held back (\d+) more \"refused\")");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), held_back);
         it != std::sregex_iterator(); ++it) {
      held += std::stoul((*it)[1]);
    }
    CHECK_MESSAGE(refused + held == 60, log);  // every line written or counted, once
  }

  TEST_CASE(
      "operations: --print-config shows flags over LOOPGUARD_* over the file, bad values "
      "name their key" *
      doctest::timeout(30)) {
    test::temp_dir dir;
    const auto config = dir.file("c.json");
    std::ofstream(config) << R"({"db": "from-file.db", "threads": 4, "log": {"format": "json"},
                                 "swarm": {"threshold": 12}})";
    std::string out;
    const int code = test::run_loopguardd(
        dir.file(""), {"--config", config, "--print-config", "--listen", "127.0.0.1:7171"}, out,
        10s, {{"LOOPGUARD_THREADS", "3"}, {"LOOPGUARD_LOG_LEVEL", "warn"}});
    REQUIRE(code == 0);
    const auto j = json::parse(out, nullptr, false);
    REQUIRE_MESSAGE(j.is_object(), out);
    CHECK(j["db"] == "from-file.db");
    CHECK(j["threads"] == 3);                // the environment over the file
    CHECK(j["listen"] == "127.0.0.1:7171");  // the flag
    CHECK(j["log"]["format"] == "json");
    CHECK(j["log"]["level"] == "warn");
    CHECK(j["swarm"]["threshold"] == 12);

    CHECK(test::run_loopguardd(dir.file(""), {"--print-config"}, out, 10s,
                               {{"LOOPGUARD_THREADS", "100"}}) == 2);
    CHECK(out.find("LOOPGUARD_THREADS: threads: expected an integer in 1..64, got 100") !=
          std::string::npos);
    std::ofstream(config) << R"({"log": {"colour": true}})";
    CHECK(test::run_loopguardd(dir.file(""), {"--config", config}, out, 10s) == 2);
    CHECK(out.find("log.colour: unknown key") != std::string::npos);
    CHECK(test::run_loopguardd(dir.file(""), {"--log-format", "xml"}, out, 10s) == 2);
    CHECK(out.find("--log-format: log format: expected text or json, got \"xml\"") !=
          std::string::npos);
  }
}

namespace {

// Checks the text exposition format line by line: HELP and TYPE before a family's samples,
// counters named *_total, each sample `name{labels} value` with a known family, histogram
// buckets cumulative up to +Inf == _count. Returns the problems found.
std::vector<std::string> exposition_problems(const std::string& text) {
  static const std::regex kSample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (\S+)$)");
  std::vector<std::string> problems;
  std::map<std::string, std::string> types;
  std::map<std::string, double> last_bucket;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto at = "line " + std::to_string(n) + ": ";
    if (line.starts_with("# HELP ")) continue;
    if (line.starts_with("# TYPE ")) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      if (type != "counter" && type != "gauge" && type != "histogram") {
        problems.push_back(at + "unknown type " + type);
      }
      if (!name.starts_with("loopguard_")) problems.push_back(at + "no loopguard_ prefix");
      if (type == "counter" && !name.ends_with("_total"))
        problems.push_back(at + "counter " + name);
      if (type != "counter" && name.ends_with("_total")) problems.push_back(at + type + " " + name);
      types[name] = type;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, kSample)) {
      problems.push_back(at + "not a sample: " + line);
      continue;
    }
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string base = family.substr(0, family.size() - std::strlen(suffix));
      if (family.ends_with(suffix) && types.count(base) && types[base] == "histogram") {
        family = base;
      }
    }
    if (!types.count(family)) problems.push_back(at + "sample before its TYPE: " + line);
    const double value = std::strtod(m[m.size() - 1].str().c_str(), nullptr);
    if (std::string(m[1]).ends_with("_bucket")) {
      if (value < last_bucket[family]) problems.push_back(at + "buckets not cumulative");
      last_bucket[family] = value;
    }
    if (std::string(m[1]).ends_with("_count") && types[family] == "histogram" &&
        value != last_bucket[family]) {
      problems.push_back(at + "_count is not the +Inf bucket");
    }
  }
  return problems;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("operations: /metrics passes the exposition format line by line and promtool" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    feed_dead_end(d.port(), "plain");
    feed_dead_end(d.port(), "we\"ird\\swarm\nname");  // label values to escape
    const auto m = http_request(d.port(), "GET", "/metrics");
    REQUIRE(m.status == 200);
    CHECK(m.header("Content-Type").starts_with("text/plain; version=0.0.4"));
    for (const auto& p : exposition_problems(m.body)) FAIL_CHECK(p);
    CHECK(m.body.find(R"(swarm="we\"ird\\swarm\nname")") != std::string::npos);
    CHECK(m.body.find("loopguard_ack_latency_seconds_count 0") == std::string::npos);

    const auto file = dir.file("metrics.txt");
    std::ofstream(file) << m.body;
    const auto out = dir.file("promtool.log");
    const pid_t pid = test::spawn_child(
        "/bin/sh", {"-c", "exec promtool check metrics < '" + file + "'"}, {out, out});
    REQUIRE(pid > 0);
    const int code = test::finish_child(pid, 30s);
    CHECK_MESSAGE(code == 0, "promtool check metrics: " << test::slurp(out));
  }

  TEST_CASE(
      "operations: without a token, pages must address the daemon by IP, and no other "
      "site's page opens a socket" *
      doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto p = d.port();
    const std::string port = std::to_string(p);
    // DNS rebinding: the attacker's name, resolving to 127.0.0.1, in Host (and in Origin).
    CHECK(http_request(p, "GET", "/api/swarms", {{"Host", "evil.example:" + port}}).status == 403);
    CHECK(http_request(p, "GET", "/", {{"Host", "evil.example:" + port}}).status == 403);
    CHECK(http_request(p, "GET", "/api/swarms", {{"Host", "localhost:" + port}}).status == 200);
    CHECK(http_request(p, "GET", "/healthz", {{"Host", "evil.example:" + port}}).status == 200);
    std::string body;
    CHECK(test::try_upgrade(p, "/ws", {{"Origin", "http://evil.example"}}, body) == 403);
    CHECK(test::try_upgrade(
              p, "/ws",
              {{"Host", "evil.example:" + port}, {"Origin", "http://evil.example:" + port}},
              body) == 403);
    // A worker (no Origin) may use any name; a page on the daemon's own address may connect.
    CHECK(test::try_upgrade(p, "/ws", {{"Host", "loopguard.internal:" + port}}, body) == 101);
    CHECK(test::try_upgrade(p, "/api/live", {{"Origin", "http://127.0.0.1:" + port}}, body) == 101);
  }

  TEST_CASE("operations: a logout ends the live view that session opened" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"),
                     {"--token-file", write_token(dir, "token", kToken)});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const auto cookie = session_cookie(http_request(d.port(), "POST", "/api/login",
                                                    {{"Content-Type", "application/json"}},
                                                    json{{"token", kToken}}.dump()));
    ws_client live(d.port(), "/api/live", {{"Cookie", cookie}});
    REQUIRE(live.next_of("snapshot", 5s).has_value());
    CHECK(http_request(d.port(), "POST", "/api/logout", {{"Cookie", cookie}}).status == 204);
    CHECK(live.wait_closed(5s) == 1008);  // policy: the session ended
  }

  TEST_CASE(
      "operations: a token file others may read is refused, and without a token only "
      "loopback is served" *
      doctest::timeout(30)) {
    test::temp_dir dir;
    const auto token = dir.file("token");
    std::ofstream(token) << "t\n";
    ::chmod(token.c_str(), 0644);
    std::string out;
    CHECK(test::run_loopguardd(dir.file(""), {"--token-file", token, "--db", dir.file("a.db")}, out,
                               10s) == 2);
    CHECK(out.find(token + ": the file holds secrets but may be read by others (mode 0644); make "
                           "it readable by its owner only: chmod 600") != std::string::npos);
    // Refused before anything is bound: the test listens on no other address.
    CHECK(test::run_loopguardd(dir.file(""), {"--listen", "0.0.0.0:0", "--db", dir.file("b.db")},
                               out, 10s) == 2);
    CHECK(out.find("without tokens the daemon serves loopback only") != std::string::npos);
  }
}
