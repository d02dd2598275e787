// The SDK's config file (sdk_config.hpp): the "daemon" object, its ranges and unknown keys, the
// token file, LOOPGUARD_CONFIG and the variables' order, and --print-config's JSON.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <string>

#include "../daemon/test_util.hpp"
#include "loopguard/sdk_config.hpp"
#include "loopguard/swarm_worker.hpp"

using loopguard::parse_sdk_config;
using loopguard::sdk_config;
using nlohmann::json;

namespace {

// The environment a test case sets: apply_sdk_env and resolve_sdk_config read it.
std::map<std::string, std::string>& env() {
  static std::map<std::string, std::string> table;
  return table;
}
const char* lookup(const char* name) {
  const auto it = env().find(name);
  return it == env().end() ? nullptr : it->second.c_str();
}
struct scoped_env {
  scoped_env(std::initializer_list<std::pair<const std::string, std::string>> vars) {
    env() = vars;
  }
  ~scoped_env() { env().clear(); }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
};

std::string sdk_config_error(const json& doc) {
  const auto c = parse_sdk_config(doc);
  return c ? "" : c.error().message();
}

std::string write(const loopguard::test::temp_dir& dir, const std::string& name,
                  const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_SUITE("sdk_config") {
  TEST_CASE("every daemon key is read") {
    const auto c = parse_sdk_config(json::parse(R"({
      "preset": "aggressive",
      "daemon": {"url": "wss://127.0.0.1:7070/ws", "token_file": "/run/t", "swarm": "s1",
                 "ca_file": "/etc/lg/ca.pem", "worker": "w1", "incarnation": "i1", "outbox": 500, "flush_delay_ms": 7,
                 "backoff_min_ms": 50, "backoff_max_ms": 900, "heartbeat_ms": 3000,
                 "report_detections": false}})"));
    REQUIRE(c.has_value());
    CHECK(c->has_daemon);
    CHECK(c->connects());
    CHECK(c->detector.preset == "aggressive");
    CHECK(c->client.url == "wss://127.0.0.1:7070/ws");
    CHECK(c->client.ca_file == "/etc/lg/ca.pem");
    CHECK(to_json(*c)["daemon"]["ca_file"] == "/etc/lg/ca.pem");
    CHECK(c->token_file == "/run/t");
    CHECK(c->client.token.empty());  // parse_sdk_config never reads the token file
    CHECK(c->client.swarm == "s1");
    CHECK(c->client.worker == "w1");
    CHECK(c->client.incarnation == "i1");
    CHECK(c->client.outbox == 500);
    CHECK(c->client.flush_delay.count() == 7);
    CHECK(c->client.backoff_min.count() == 50);
    CHECK(c->client.backoff_max.count() == 900);
    CHECK(c->client.heartbeat.count() == 3000);
    CHECK_FALSE(c->client.report_detections);
  }

  TEST_CASE("without a daemon object the detector document alone, with client defaults") {
    const auto c = parse_sdk_config(json::parse(R"({"detectors": {"exact": {"warn_at": 5}}})"));
    REQUIRE(c.has_value());
    CHECK_FALSE(c->has_daemon);
    CHECK_FALSE(c->connects());
    CHECK(c->detector.exact.steps.warn_at == 5);
    CHECK(c->client.outbox == loopguard::client_options{}.outbox);
    CHECK(c->client.heartbeat == loopguard::client_options{}.heartbeat);
  }

  TEST_CASE("parse_config still refuses daemon and unknown top-level keys") {
    const auto plain = loopguard::parse_config(json::parse(R"({"daemon": {}})"));
    REQUIRE_FALSE(plain.has_value());
    CHECK(plain.error().message().find("daemon: unknown key") == 0);
    CHECK(sdk_config_error(json::parse(R"({"daemon": {}, "detecters": {}})"))
              .find("detecters: unknown key") == 0);
  }

  TEST_CASE("an unknown daemon key is named with its path") {
    const std::string e = sdk_config_error(json::parse(R"({"daemon": {"outbox_size": 5}})"));
    CHECK(e.find("daemon.outbox_size: unknown key, expected one of") == 0);
    CHECK(e.find("outbox") != std::string::npos);
    // The token itself is never a key of the file: token_file is.
    CHECK(sdk_config_error(json::parse(R"({"daemon": {"token": "secret"}})"))
              .find("daemon.token: unknown key") == 0);
  }

  TEST_CASE("out-of-range and mistyped values name the key") {
    CHECK(sdk_config_error(json::parse(R"({"daemon": {"outbox": 0}})")) ==
          "daemon.outbox: expected an integer in 1..10000000, got 0");
    CHECK(sdk_config_error(json::parse(R"({"daemon": {"heartbeat_ms": 0}})"))
              .find("daemon.heartbeat_ms: expected an integer in 1..86400000") == 0);
    CHECK(sdk_config_error(json::parse(R"({"daemon": {"flush_delay_ms": -1}})"))
              .find("daemon.flush_delay_ms:") == 0);
    CHECK(sdk_config_error(
              json::parse(R"({"daemon": {"backoff_min_ms": 500, "backoff_max_ms": 100}})")) ==
          "daemon.backoff_max_ms: expected at least backoff_min_ms (500), got 100");
    CHECK(sdk_config_error(json::parse(R"({"daemon": {"report_detections": "yes"}})"))
              .find("daemon.report_detections: expected") == 0);
    CHECK(sdk_config_error(json::parse(R"({"daemon": {"swarm": ""}})")) ==
          "daemon.swarm: expected 1..128 bytes, got \"\"");
    CHECK(
        sdk_config_error(json::parse(R"({"daemon": {"worker": ")" + std::string(129, 'w') + "\"}}"))
            .find("daemon.worker:") == 0);
    CHECK(
        sdk_config_error(json::parse(R"({"daemon": {"url": "http://x:1"}})")).find("daemon.url:") ==
        0);
    CHECK(sdk_config_error(json::parse(R"({"daemon": []})")).find("daemon: expected an object") ==
          0);
    CHECK(sdk_config_error(json::parse(R"({"daemon": {}, "detectors": {"exact": {"warn_at": 0}}})"))
              .find("detectors.exact.warn_at:") == 0);
  }

  TEST_CASE("the token file's first line is the token") {
    const loopguard::test::temp_dir dir;
    const std::string token = write(dir, "token", "  s3cret \nsecond line\n");
    const std::string path =
        write(dir, "sdk.json",
              R"({"daemon": {"url": "ws://127.0.0.1:1", "token_file": ")" + token + R"("}})");
    const auto c = loopguard::load_sdk_config(path);
    REQUIRE(c.has_value());
    CHECK(c->client.token == "s3cret");
    const json printed = to_json(*c);
    CHECK(printed["daemon"]["token"] == "<set>");
    CHECK(printed["daemon"]["token_file"] == token);
    CHECK(printed.dump().find("s3cret") == std::string::npos);
  }

  TEST_CASE("an unreadable or empty token file is named") {
    const loopguard::test::temp_dir dir;
    const std::string missing = dir.file("nope");
    const std::string path =
        write(dir, "sdk.json", R"({"daemon": {"token_file": ")" + missing + R"("}})");
    const auto c = loopguard::load_sdk_config(path);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message() == path + ": daemon.token_file: cannot read \"" + missing + "\"");

    const std::string empty = write(dir, "empty", "\n");
    const std::string path2 =
        write(dir, "sdk2.json", R"({"daemon": {"token_file": ")" + empty + R"("}})");
    const auto c2 = loopguard::load_sdk_config(path2);
    REQUIRE_FALSE(c2.has_value());
    CHECK(c2.error().message() ==
          path2 + ": daemon.token_file: \"" + empty + "\": the first line is empty");
  }

  TEST_CASE("a bad file is named") {
    const loopguard::test::temp_dir dir;
    const auto none = loopguard::load_sdk_config(dir.file("none.json"));
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message() == dir.file("none.json") + ": cannot read the config file");
    const std::string bad = write(dir, "bad.json", R"({"daemon": {"outbox": 1.5}})");
    const auto c = loopguard::load_sdk_config(bad);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message().find(bad + ": daemon.outbox: expected an integer") == 0);
  }

  TEST_CASE("the variables override the file, in order, and errors name the variable") {
    const loopguard::test::temp_dir dir;
    const std::string path = write(dir, "sdk.json", R"({"preset": "conservative", "daemon": {
        "url": "ws://127.0.0.1:1", "swarm": "from-file", "worker": "w-file", "outbox": 9}})");
    {
      const scoped_env vars{{"LOOPGUARD_CONFIG", path},
                            {"LOOPGUARD_DAEMON", "ws://127.0.0.1:2"},
                            {"LOOPGUARD_SWARM", "from-env"},
                            {"LOOPGUARD_TOKEN", "tok"},
                            {"LOOPGUARD_CA_FILE", "/run/ca.pem"}};
      const auto c = loopguard::resolve_sdk_config("", lookup);
      REQUIRE(c.has_value());
      CHECK(c->detector.preset == "conservative");
      CHECK(c->client.url == "ws://127.0.0.1:2");
      CHECK(c->client.swarm == "from-env");
      CHECK(c->client.worker == "w-file");  // LOOPGUARD_WORKER unset: the file's
      CHECK(c->client.token == "tok");
      CHECK(c->client.ca_file == "/run/ca.pem");
      CHECK(c->client.outbox == 9);
    }
    {
      // A path given by the program wins over LOOPGUARD_CONFIG.
      const std::string other = write(dir, "other.json", R"({"preset": "aggressive"})");
      const scoped_env vars{{"LOOPGUARD_CONFIG", path}};
      const auto c = loopguard::resolve_sdk_config(other, lookup);
      REQUIRE(c.has_value());
      CHECK(c->detector.preset == "aggressive");
      CHECK_FALSE(c->has_daemon);
    }
    {
      const scoped_env vars{{"LOOPGUARD_CONFIG", dir.file("missing.json")}};
      const auto c = loopguard::resolve_sdk_config("", lookup);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().message().find("LOOPGUARD_CONFIG: " + dir.file("missing.json")) == 0);
    }
    {
      const scoped_env vars{{"LOOPGUARD_SWARM", ""}};
      const auto c = loopguard::resolve_sdk_config("", lookup);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().message() ==
            "LOOPGUARD_SWARM: daemon.swarm: expected 1..128 bytes, got \"\"");
    }
    {
      const scoped_env vars{{"LOOPGUARD_DAEMON", "http://x:1"}};
      const auto c = loopguard::resolve_sdk_config("", lookup);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().message().find("LOOPGUARD_DAEMON: daemon.url:") == 0);
    }
    {
      const scoped_env vars{{"LOOPGUARD_TOKEN", std::string(200, 't')}};
      const auto c = loopguard::resolve_sdk_config("", lookup);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().message().find("LOOPGUARD_TOKEN: expected a token of 1..128 bytes") == 0);
    }
  }

  TEST_CASE("no file and no variables are the defaults") {
    const scoped_env vars{};
    const auto c = loopguard::resolve_sdk_config("", lookup);
    REQUIRE(c.has_value());
    CHECK(c->detector.preset == "balanced");
    CHECK_FALSE(c->connects());
    const json printed = to_json(*c);
    CHECK_FALSE(printed["daemon"].contains("token"));
    CHECK(printed["daemon"]["outbox"] == 10000);
  }

  TEST_CASE("the printed configuration reads back, but for the token") {
    const auto c = parse_sdk_config(json::parse(
        R"({"preset": "aggressive", "daemon": {"url": "ws://127.0.0.1:3", "swarm": "s", "worker": "w",
            "token_file": "/t", "heartbeat_ms": 42}})"));
    REQUIRE(c.has_value());
    json printed = to_json(*c);
    CHECK_FALSE(printed["daemon"].contains("token"));
    const auto again = parse_sdk_config(printed);
    REQUIRE(again.has_value());
    CHECK(to_json(*again) == printed);
  }

  TEST_CASE("a swarm_worker is configured from the file in two lines") {
    const auto c = parse_sdk_config(json::parse(
        R"({"mode": "observe", "daemon": {"url": "ws://127.0.0.1:9", "swarm": "s",
            "worker": "w", "backoff_min_ms": 10000, "backoff_max_ms": 10000}})"));
    REQUIRE(c.has_value());
    loopguard::swarm_worker w(c->detector);
    REQUIRE(c->connects());
    CHECK(w.connect(c->client).ok());  // never blocks on the network
    REQUIRE(w.client() != nullptr);
    CHECK(w.client()->options().observe);
    CHECK(w.client()->options().backoff_min.count() == 10000);
  }
}
