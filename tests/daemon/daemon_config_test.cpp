// loopguardd's configuration: the protocol features (--protocol-features and the config key),
// the TLS files (tls.cert, tls.key).
#include <doctest/doctest.h>

#include <fstream>

#include "server/daemon_config.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

using name_list = std::vector<std::string>;

result<daemon_config> config_of(const std::string& text) {
  test::temp_dir dir;
  std::ofstream(dir.file("c.json")) << text;
  auto c = load_config(dir.file("c.json"));
  if (!c) return status::error(c.error().message().substr(dir.file("c.json").size()));
  return c;
}

}  // namespace

TEST_SUITE("daemon config") {
  TEST_CASE("by default every protocol feature is listed") {
    const daemon_config c;
    CHECK(c.protocol_features == name_list{"detections", "active_verdicts", "error_seq",
                                           "swarm_url", "observe", "cost", "handoff"});
  }

  TEST_CASE("--protocol-features: all, none or a list of known features") {
    CHECK(*parse_protocol_features("all") == all_protocol_features());
    CHECK(parse_protocol_features("none")->empty());
    CHECK(*parse_protocol_features("swarm_url,detections") == name_list{"swarm_url", "detections"});
    const auto unknown = parse_protocol_features("detections,bogus");
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().message() ==
          "--protocol-features: unknown feature \"bogus\" (known: detections, active_verdicts, "
          "error_seq, swarm_url, observe, cost, handoff; or all, none)");
    const auto twice = parse_protocol_features("error_seq,error_seq");
    REQUIRE_FALSE(twice.has_value());
    CHECK(twice.error().message() == "--protocol-features: \"error_seq\" is listed twice");
    CHECK_FALSE(parse_protocol_features("").has_value());
  }

  TEST_CASE("the config key protocol_features: an array of known features") {
    CHECK(config_of(R"({"protocol_features":[]})")->protocol_features.empty());
    CHECK(config_of(R"({"protocol_features":["error_seq"]})")->protocol_features ==
          name_list{"error_seq"});
    CHECK(config_of("{}")->protocol_features == all_protocol_features());
    const auto bad = config_of(R"({"protocol_features":["detections","nope"]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() ==
          ": protocol_features[1]: expected one of detections, active_verdicts, error_seq, "
          "swarm_url, observe, cost, handoff, got \"nope\"");
    const auto twice = config_of(R"({"protocol_features":["swarm_url","swarm_url"]})");
    REQUIRE_FALSE(twice.has_value());
    CHECK(twice.error().message() ==
          ": protocol_features[1]: expected a feature not listed before, got \"swarm_url\"");
  }

  TEST_CASE(
      "retention: idle times in seconds (0 off), from the file, the environment and to_json") {
    const auto d = config_of("{}");
    CHECK(d->retention.incarnation_idle == 7 * 86400);
    CHECK(d->retention.swarm_idle == 30 * 86400);
    CHECK(d->retention.expired_kept == 90 * 86400);
    CHECK(d->sweep_interval == std::chrono::milliseconds(60000));
    const auto c =
        config_of(R"({"retention":{"incarnation_idle_s":2,"swarm_idle_s":0,"expired_kept_s":5,)"
                  R"("sweep_interval_ms":50}})");
    REQUIRE(c.has_value());
    CHECK(c->retention.incarnation_idle == 2);
    CHECK(c->retention.swarm_idle == 0);
    CHECK(c->retention.expired_kept == 5);
    CHECK(c->sweep_interval == std::chrono::milliseconds(50));
    CHECK(to_json(*c)["retention"] == nlohmann::json{{"incarnation_idle_s", 2},
                                                     {"swarm_idle_s", 0},
                                                     {"expired_kept_s", 5},
                                                     {"sweep_interval_ms", 50}});
    const auto bad = config_of(R"({"retention":{"swarm_idle_s":-1}})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message() ==
          ": retention.swarm_idle_s: expected an integer in 0..315360000, got -1");
    daemon_config e;
    const auto s = apply_env(e, [](const char* n) -> const char* {
      return std::string_view(n) == "LOOPGUARD_INCARNATION_IDLE_S" ? "60" : nullptr;
    });
    REQUIRE(s.ok());
    CHECK(e.retention.incarnation_idle == 60);
  }

  TEST_CASE("the config keys tls.cert and tls.key, and LOOPGUARD_TLS_CERT and _KEY over them") {
    const auto c = config_of(R"({"tls":{"cert":"/etc/lg/cert.pem","key":"/etc/lg/key.pem"}})");
    REQUIRE(c.has_value());
    CHECK(c->tls_cert == "/etc/lg/cert.pem");
    CHECK(c->tls_key == "/etc/lg/key.pem");
    CHECK(to_json(*c)["tls"] ==
          nlohmann::json{{"cert", "/etc/lg/cert.pem"}, {"key", "/etc/lg/key.pem"}});
    CHECK(config_of("{}")->tls_cert.empty());
    const auto unknown = config_of(R"({"tls":{"certificate":"x"}})");
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().message().find("tls.certificate: unknown key") != std::string::npos);
    const auto wrong = config_of(R"({"tls":{"cert":7}})");
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().message().find("tls.cert: expected a string") != std::string::npos);
    daemon_config from_env = *c;
    const env_lookup get = [](const char* n) -> const char* {
      return std::string_view(n) == "LOOPGUARD_TLS_CERT" ? "/run/cert.pem" : nullptr;
    };
    REQUIRE(apply_env(from_env, get).ok());
    CHECK(from_env.tls_cert == "/run/cert.pem");
    CHECK(from_env.tls_key == "/etc/lg/key.pem");  // the file's, no variable over it
  }
}
