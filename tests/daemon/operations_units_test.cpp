// The pure parts of operating the daemon: the log rate limit, HTTP access (tokens, cookies,
// sessions), the config's environment overrides, and readiness after a failed checkpoint.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>

#include "../daemon/fault_injecting_store.hpp"
#include "server/access_control.hpp"
#include "server/daemon_config.hpp"
#include "server/rate_limiter.hpp"
#include "service/checkpointer.hpp"
#include "service/daemon_log.hpp"
#include "service/line_limiter.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "test_util.hpp"

using namespace loopguard::daemon;
using namespace std::chrono_literals;

TEST_SUITE("operations") {
  TEST_CASE("line_limiter: a burst per window, then one count of what was held back") {
    line_limiter l(3, 10s);
    const auto t0 = line_limiter::clock::time_point{} + 1h;
    for (int i = 0; i < 3; ++i) CHECK(l.admit("refused", t0 + std::chrono::seconds(i)).write);
    for (int i = 0; i < 5; ++i) CHECK_FALSE(l.admit("refused", t0 + 5s).write);
    CHECK(l.admit("verdict", t0 + 5s).write);  // kinds are apart
    CHECK(l.expire(t0 + 9s).empty());          // the window has not ended
    const auto ended = l.expire(t0 + 10s);
    REQUIRE(ended.size() == 1);
    CHECK(ended[0].kind == "refused");
    CHECK(ended[0].lines == 5);
    CHECK(l.expire(t0 + 30s).empty());  // reported once
    // Or reported by the next line of the kind, when no flush came between.
    for (int i = 0; i < 4; ++i) (void)l.admit("accept_failed", t0 + 40s);
    (void)l.admit("verdict", t0 + 41s);
    const auto at_exit = line_limiter(l).drain();  // a copy: everything held, ended or not
    REQUIRE(at_exit.size() == 1);
    CHECK(at_exit[0].kind == "accept_failed");
    CHECK(at_exit[0].lines == 1);
    const auto next = l.admit("accept_failed", t0 + 51s);
    CHECK(next.write);
    CHECK(next.suppressed_before == 1);
  }

  TEST_CASE("access: bearer tokens and cookies") {
    CHECK(same_secret("abc", "abc"));
    CHECK_FALSE(same_secret("abc", "abd"));
    CHECK_FALSE(same_secret("abc", "abcd"));
    CHECK_FALSE(same_secret("", "a"));
    CHECK(cookie_value("a=1; loopguard_session=xyz; b=2", kSessionCookie) == "xyz");
    CHECK(cookie_value("loopguard_session_old=1", kSessionCookie) == std::nullopt);
    CHECK(bearer_token("Bearer abc") == "abc");
    CHECK(bearer_token("bearer abc") == "abc");
    CHECK(bearer_token("Basic abc") == std::nullopt);
    CHECK(bearer_token("Bearer ") == std::nullopt);

    const auto now = access_control::clock::now();
    access_control open;
    CHECK(open.check("", "", now) == access_control::grant::open);
    CHECK(*open.login("anything", now) == std::string());
    CHECK(open.metrics_allowed(""));

    access_control a;
    auto tokens = token_table::parse(
        "secret-admin-token-0001 admin\nworker-token-0000000001 swarm=s-*\n", "tokens");
    REQUIRE(tokens.has_value());
    a.configure(std::move(*tokens), "scrape");
    const std::string secret = "secret-admin-token-0001";
    CHECK(a.check("", "", now) == access_control::grant::refused);
    CHECK(a.check("Bearer " + secret, "", now) == access_control::grant::bearer);
    CHECK(a.check("Bearer worker-token-0000000001", "", now) == access_control::grant::worker);
    CHECK_FALSE(access_control::admits(access_control::grant::worker));
    CHECK(a.check("Bearer scrape", "", now) == access_control::grant::refused);
    CHECK(a.metrics_allowed("Bearer scrape"));
    CHECK_FALSE(a.metrics_allowed("Bearer " + secret));
    CHECK(a.login("wrong", now).error().code() == "unauthorized");
    CHECK(a.login("worker-token-0000000001", now).error().code() == "forbidden");
    const auto id = a.login(secret, now);
    REQUIRE(id.has_value());
    CHECK(id->size() == 64);
    CHECK(*a.login(secret, now) != *id);  // every login its own session
    const std::string cookie = "loopguard_session=" + *id;
    CHECK(a.check("", cookie, now) == access_control::grant::cookie);
    CHECK(a.check("", cookie, now + access_control::kSessionLifetime) ==
          access_control::grant::refused);  // expired
    const auto id2 = a.login(secret, now);
    a.logout("loopguard_session=" + *id2);
    CHECK(a.check("", "loopguard_session=" + *id2, now) == access_control::grant::refused);
    CHECK(local_host("127.0.0.1:7070"));
    CHECK(local_host("127.0.0.1"));
    CHECK(local_host("[::1]:7070"));
    CHECK(local_host("LocalHost:80"));
    CHECK(local_host("10.1.2.3:7070"));
    CHECK_FALSE(local_host("evil.example:7070"));
    CHECK_FALSE(local_host("localhost.evil.example"));
    CHECK_FALSE(local_host(""));
    CHECK_FALSE(local_host("[::1"));
    CHECK_FALSE(local_host("[::1]x"));
    CHECK_FALSE(local_host("1.2.3.4:5:6"));
    CHECK(access_control::set_cookie("x").find("HttpOnly; SameSite=Strict") != std::string::npos);
    CHECK(access_control::set_cookie("").find("Max-Age=0") != std::string::npos);
  }

  TEST_CASE("access: sessions are bounded, the oldest goes first") {
    access_control a;
    a.configure(token_table::single_admin("secret"), "");
    const auto t0 = access_control::clock::now();
    const auto first = a.login("secret", t0);
    for (std::size_t i = 1; i <= access_control::kMaxSessions; ++i) {
      (void)a.login("secret", t0 + std::chrono::milliseconds(i));
    }
    CHECK(a.check("", "loopguard_session=" + *first, t0 + 1h) == access_control::grant::refused);
  }

  TEST_CASE("config: LOOPGUARD_* variables read as their keys, errors name the variable") {
    std::map<std::string, std::string> env;
    static std::map<std::string, std::string>* table = nullptr;
    table = &env;
    const env_lookup get = [](const char* n) -> const char* {
      const auto it = table->find(n);
      return it == table->end() ? nullptr : it->second.c_str();
    };
    daemon_config c;
    env = {{"LOOPGUARD_DB", "/var/lib/loopguard/x.db"},
           {"LOOPGUARD_THREADS", "8"},
           {"LOOPGUARD_LOG_FORMAT", "json"},
           {"LOOPGUARD_CHECKPOINT_INTERVAL_MS", "20"}};
    REQUIRE(apply_env(c, get).ok());
    CHECK(c.db == "/var/lib/loopguard/x.db");
    CHECK(c.threads == 8);
    CHECK(c.log_format == "json");
    CHECK(c.checkpoint_interval == 20ms);
    const auto j = to_json(c);
    CHECK(j["db"] == "/var/lib/loopguard/x.db");
    CHECK(j["log"]["format"] == "json");
    CHECK(j["limits"]["max_connections"] == server_limits::kMaxConnections);

    env = {{"LOOPGUARD_LOG_LEVEL", "loud"}};
    auto s = apply_env(c, get);
    CHECK(s.message().starts_with("LOOPGUARD_LOG_LEVEL: log.level: expected one of trace"));
    env = {{"LOOPGUARD_COMPACT_LOG_MB", "many"}};
    s = apply_env(c, get);
    CHECK(s.message() == "LOOPGUARD_COMPACT_LOG_MB: expected a number, got \"many\"");
    env = {{"LOOPGUARD_COMPACT_LOG_MB", "0"}};
    s = apply_env(c, get);
    CHECK(s.message().find("compact_log_mb: expected an integer in 1..65536, got 0") !=
          std::string::npos);
  }

  TEST_CASE("readiness: a failing checkpoint makes the daemon not ready until one commits") {
    swarm_service svc;
    auto opened = sqlite_checkpoint_store::open(":memory:", {});
    REQUIRE(opened.has_value());
    // The first step of the next write to the main file fails (the rows file's are not counted:
    // the compaction's worker thread writes it meanwhile).
    fault_injecting_store faulty(**opened, 1, fault_injecting_store::scope::main_file);
    daemon_metrics metrics;
    std::atomic<std::uint64_t> durable{0};
    // A long interval: after the failure the checkpointer backs off (4 intervals) until stop().
    checkpointer cp(svc, faulty, metrics, 10s, [&](std::uint64_t e) { durable = e; });
    const auto r = svc.ingest({"s", "w0", "inc"}, {loopguard::test::wire_event(1, 1, 1.0)});
    REQUIRE(r.error.ok());
    cp.start();
    cp.nudge();
    for (int i = 0; i < 4000 && metrics.durable.failure().empty(); ++i) {  // 20 s at most
      std::this_thread::sleep_for(5ms);
    }
    CHECK_FALSE(metrics.durable.failure().empty());
    CHECK(durable < r.epoch);
    CHECK(cp.stop());  // the final checkpoint retries it (only the first step failed) and commits
    CHECK(durable >= r.epoch);
    CHECK(metrics.durable.failure().empty());
  }

  TEST_CASE("logs: a hostile name cannot forge a line or break the JSON") {
    const std::string evil = "w\n2026-11-25 error forged \"x\"\xff";
    const auto text = logs::render(logs::format::text, "refused", "hello from " + evil,
                                   {{"worker", evil}, {"code", "unauthorized"}});
    CHECK(text.find('\n') == std::string::npos);
    CHECK(text.starts_with("refused: hello from w\\n2026"));
    CHECK(text.find("code=unauthorized") != std::string::npos);
    CHECK(text.find("worker=\"w\\n2026-11-25 error forged \\\"x\\\"\xEF\xBF\xBD\"") !=
          std::string::npos);
    const auto json_text = logs::render(logs::format::json, "refused", evil, {{"worker", evil}});
    const auto j = nlohmann::json::parse(R"({"time":"t","level":"warn",)" + json_text);
    CHECK(j["event"] == "refused");
    CHECK(j["worker"] == "w\n2026-11-25 error forged \"x\"\xEF\xBF\xBD");
    CHECK(json_text.find('\n') == std::string::npos);
  }

  TEST_CASE("rate_limiter: a burst passes, a debt is waited off, time refills") {
    const auto t0 = rate_limiter::clock::time_point{} + 1h;
    rate_limiter r(100, 100, t0);
    CHECK(r.take(100, t0) == rate_limiter::clock::duration::zero());
    CHECK(r.take(50, t0) == std::chrono::duration_cast<rate_limiter::clock::duration>(500ms));
    // 1 s later the debt of 50 is paid and 50 more are in the bucket.
    CHECK(r.take(50, t0 + 1s) == rate_limiter::clock::duration::zero());
    CHECK(r.take(0, t0 + 1h) == rate_limiter::clock::duration::zero());  // never above burst
    CHECK(r.take(101, t0 + 1h) == std::chrono::duration_cast<rate_limiter::clock::duration>(10ms));
  }

  TEST_CASE("logs: formats and levels by name") {
    CHECK(logs::parse_format("json").value() == logs::format::json);
    CHECK_FALSE(logs::parse_format("xml").has_value());
    CHECK(logs::parse_level("warn").value() == spdlog::level::warn);
    CHECK(logs::parse_level("error").value() == spdlog::level::err);
    CHECK_FALSE(logs::parse_level("loud").has_value());
  }
}
