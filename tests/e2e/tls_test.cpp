// TLS end to end (docs/operations.md, "TLS"): a real loopguardd with --tls-cert / --tls-key
// and a self-signed certificate made here, on a loopback port; the SDK client over wss://,
// `inspect` over https://, `simulate` and `replay --daemon` over wss://; clients that do not
// trust the certificate, a certificate for another host, and a plaintext client are refused,
// and the daemon goes on serving the others.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http.hpp>
#include "../daemon/test_util.hpp"
#include "cli_process.hpp"
#include "cycling_events.hpp"
#include "daemon_process.hpp"

#include "loopguard/daemon_client.hpp"
#include "loopguard/tls_stream.hpp"
#include "test_certificate.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::cli_result;
using test::daemon_process;
using test::run_loopguard;

namespace {

const std::string kTraceData = LOOPGUARD_TEST_DATA_DIR;

// A certificate for 127.0.0.1 and localhost in `dir`, and a loopguardd serving TLS with it.
struct tls_daemon {
  explicit tls_daemon(const test::temp_dir& dir,
                      const std::string& alt_names = "DNS:localhost,IP:127.0.0.1")
      : cert(dir.file("cert.pem")),
        key(dir.file("key.pem")),
        made((test::write_self_signed(cert, key, "localhost", alt_names), true)),
        d(dir.file(""), dir.file("lg.db"), {"--tls-cert", cert, "--tls-key", key}) {}
  std::string wss(const std::string& host = "127.0.0.1") const {
    return "wss://" + host + ":" + std::to_string(d.port());
  }
  std::string https() const { return "https://127.0.0.1:" + std::to_string(d.port()); }

  std::string cert, key;
  bool made;
  daemon_process d;
};

client_options tls_options(const std::string& url, const std::string& ca_file,
                           const std::string& worker) {
  client_options o;
  o.url = url;
  o.ca_file = ca_file;
  o.swarm = "tls";
  o.worker = worker;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  return o;
}

namespace net = boost::asio;

// A blocking TLS connection to 127.0.0.1:`port`, the daemon verified against `ca_file`; reads
// give up after 10 s (SO_RCVTIMEO).
struct tls_connection {
  tls_connection(unsigned short port, const std::string& ca_file)
      : ctx(*tls::client_context(ca_file)), s(ioc.get_executor(), ctx.get()) {
    s.next_layer().connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    timeval tv{10, 0};
    ::setsockopt(s.next_layer().socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    REQUIRE(tls::expect_host(*s.tls(), "127.0.0.1").ok());
    s.tls()->handshake(net::ssl::stream_base::client);
  }
  net::io_context ioc;
  std::shared_ptr<net::ssl::context> ctx;
  tls::stream s;
};

// GET `target` over TLS, verified against `ca_file`; the body of a 200 answer.
std::string https_get(unsigned short port, const std::string& ca_file, const std::string& target) {
  namespace http = boost::beast::http;
  tls_connection c(port, ca_file);
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(*c.s.tls(), req);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(*c.s.tls(), buffer, res);
  REQUIRE(res.result_int() == 200);
  return res.body();
}

std::uint64_t handshake_failures(const tls_daemon& t) {
  const std::string metrics = https_get(t.d.port(), t.cert, "/metrics");
  const std::string name = "\nloopguard_tls_handshake_failures_total ";
  const auto at = metrics.find(name);
  REQUIRE(at != std::string::npos);
  return std::stoull(metrics.substr(at + name.size()));
}

// The client is refused for good: no welcome ever, fatal, the reason kept.
void check_refused(daemon_client& c, const std::string& reason) {
  CHECK_FALSE(c.wait_connected(3s));
  const auto s = c.stats();
  CHECK(s.fatal);
  CHECK(s.connects == 0);
  CHECK_MESSAGE(s.last_error.find(reason) != std::string::npos, s.last_error);
}

}  // namespace

TEST_SUITE("tls") {
  TEST_CASE("TLS: an SDK client over wss:// with the CA file has every event acknowledged" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    tls_daemon t(dir);
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    // By IP address (checked against the IP SAN) and by name (SNI, the DNS SAN).
    daemon_client by_ip(tls_options(t.wss(), t.cert, "w1"));
    daemon_client by_name(tls_options(t.wss("localhost"), t.cert, "w2"));
    test::send_cycling(by_ip, 200, 7);
    test::send_cycling(by_name, 200, 7);
    CHECK(by_ip.wait_acknowledged(200, 10s));
    CHECK(by_name.wait_acknowledged(200, 10s));
    CHECK(by_ip.stats().last_error.empty());
    CHECK(by_name.stats().connects == 1);
  }

  TEST_CASE("TLS: a client without the CA file is refused with the verification error, for good" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    tls_daemon t(dir);
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    daemon_client c(tls_options(t.wss(), "", "w1"));  // the system's CAs: not this one
    check_refused(c, "certificate verification failed: self-signed certificate");
    CHECK(c.stats().disconnects == 0);
    // inspect and simulate say so too, and exit with their daemon failures.
    const cli_result inspect = run_loopguard(dir.file(""), {"inspect", "--daemon", t.https()});
    CHECK(inspect.exit == 3);
    CHECK_MESSAGE(
        inspect.err.find("TLS handshake: certificate verification failed") != std::string::npos,
        inspect.err);
    const cli_result sim =
        run_loopguard(dir.file(""), {"simulate", "--daemon", t.wss(), "--workers", "1", "--stuck",
                                     "0", "--duration", "0.2", "--timeout", "5"});
    CHECK(sim.exit == 2);
    CHECK_MESSAGE(sim.err.find("cannot trust the daemon at " + t.wss()) != std::string::npos,
                  sim.err);
    // A CA file that does not exist is named before anything is sent.
    const cli_result missing = run_loopguard(
        dir.file(""), {"inspect", "--daemon", t.https(), "--ca-file", dir.file("none.pem")});
    CHECK(missing.exit == 2);
    CHECK_MESSAGE(missing.err.find(dir.file("none.pem")) != std::string::npos, missing.err);
  }

  TEST_CASE("TLS: a certificate for another host is refused even from a trusted CA" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    tls_daemon t(dir, "DNS:other.example");
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    daemon_client by_ip(tls_options(t.wss(), t.cert, "w1"));
    check_refused(by_ip, "IP address mismatch");
    daemon_client by_name(tls_options(t.wss("localhost"), t.cert, "w2"));
    check_refused(by_name, "hostname mismatch");
  }

  TEST_CASE("TLS: a plaintext client is closed, counted and logged, and the others are served" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    tls_daemon t(dir);
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    daemon_client c(tls_options(t.wss(), t.cert, "w1"));
    REQUIRE(c.wait_connected(5s));
    for (int i = 0; i < 3; ++i) {
      CHECK_THROWS(test::ws_client(t.d.port(), "/ws?swarm=tls"));
      std::string body;
      CHECK_THROWS(test::http_get(t.d.port(), "/healthz", body));
    }
    daemon_client plain(tls_options("ws://127.0.0.1:" + std::to_string(t.d.port()), "", "w2"));
    CHECK_FALSE(plain.wait_connected(1s));
    test::send_cycling(c, 50, 7);
    CHECK(c.wait_acknowledged(50, 10s));
    CHECK(c.stats().disconnects == 0);
    // Six failed handshakes (three WebSocket, three HTTP), and the SDK client's retries.
    CHECK(handshake_failures(t) >= 6);
    CHECK(t.d.log().find("tls_handshake_failed") != std::string::npos);
  }

  TEST_CASE("TLS: inspect over https://, simulate and replay --daemon over wss://" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    tls_daemon t(dir);
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    const cli_result sim = run_loopguard(
        dir.file(""), {"simulate", "--daemon", t.wss(), "--ca-file", t.cert, "--workers", "3",
                       "--stuck", "2", "--rate", "20", "--duration", "1", "--swarm", "sim"});
    REQUIRE_MESSAGE(sim.exit == 0, sim.err);
    const cli_result inspect = run_loopguard(
        dir.file(""), {"inspect", "--daemon", t.https(), "--ca-file", t.cert, "--swarm", "sim"});
    CHECK_MESSAGE(inspect.exit == 0, inspect.err);
    CHECK(inspect.out.find("swarm \"sim\": 3 workers") != std::string::npos);
    // replay --daemon: the daemon's global lines are the offline ones, as over ws://.
    std::vector<std::string> traces;
    for (const auto& e : std::filesystem::directory_iterator(kTraceData + "/replay")) {
      if (e.path().extension() == ".jsonl") traces.push_back(e.path().string());
    }
    REQUIRE_FALSE(traces.empty());
    std::vector<std::string> offline_args = {"replay"};
    offline_args.insert(offline_args.end(), traces.begin(), traces.end());
    std::vector<std::string> online_args = {"replay", "--daemon", t.wss(), "--ca-file", t.cert};
    online_args.insert(online_args.end(), traces.begin(), traces.end());
    const cli_result offline = run_loopguard(dir.file(""), offline_args);
    REQUIRE(offline.exit == 0);
    const cli_result online = run_loopguard(dir.file(""), online_args);
    CHECK_MESSAGE(online.exit == 0, online.err);
    CHECK(online.out == offline.out);
  }

  TEST_CASE("TLS: a hello in the same TLS write as the upgrade request is answered" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    tls_daemon t(dir);
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    tls_connection c(t.d.port(), t.cert);
    const std::string hello =
        R"({"type":"hello","version":1,"swarm":"s","worker":"w","incarnation":"i"})";
    REQUIRE(hello.size() < 126);
    std::string bytes =
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    // One masked text frame (RFC 6455 5.2) in the same write: one TLS record.
    const unsigned char mask[4] = {1, 2, 3, 4};
    bytes += static_cast<char>(0x81);
    bytes += static_cast<char>(0x80 | hello.size());
    bytes.append(reinterpret_cast<const char*>(mask), 4);
    for (std::size_t i = 0; i < hello.size(); ++i) {
      bytes += static_cast<char>(hello[i] ^ mask[i % 4]);
    }
    net::write(*c.s.tls(), net::buffer(bytes));
    std::string got;
    char buf[4096];
    while (got.find("\"welcome\"") == std::string::npos) {
      boost::system::error_code ec;
      const std::size_t n = c.s.tls()->read_some(net::buffer(buf), ec);
      if (ec) break;
      got.append(buf, n);
    }
    CHECK(got.starts_with("HTTP/1.1 101"));
    CHECK(got.find("\"welcome\"") != std::string::npos);
  }

  TEST_CASE("TLS: a connection that never starts its handshake is closed at the deadline" *
            doctest::timeout(40)) {
    test::temp_dir dir;
    tls_daemon t(dir);
    REQUIRE_MESSAGE(t.d.port() != 0, t.d.log());
    const auto before = handshake_failures(t);
    net::io_context ioc;
    net::ip::tcp::socket silent(ioc);
    silent.connect({net::ip::make_address("127.0.0.1"), t.d.port()});
    timeval tv{20, 0};
    ::setsockopt(silent.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const auto start = std::chrono::steady_clock::now();
    char byte = 0;
    boost::system::error_code ec;
    CHECK(silent.read_some(net::buffer(&byte, 1), ec) == 0);
    const auto waited = std::chrono::steady_clock::now() - start;
    CHECK(ec == net::error::eof);  // closed by the daemon, not our receive timeout
    CHECK(waited >= 9s);           // the handshake deadline: 10 s
    CHECK(waited < 15s);
    CHECK(handshake_failures(t) == before + 1);
  }

  TEST_CASE("TLS: a key file others may read or write is warned about, 0600 and 0640 are not" *
            doctest::timeout(60)) {
    namespace fs = std::filesystem;
    test::temp_dir dir;
    const std::string cert = dir.file("cert.pem"), key = dir.file("key.pem");
    test::write_self_signed(cert, key, "localhost", "IP:127.0.0.1");
    const struct {
      fs::perms mode;
      const char* shown;  // "" : no warning
    } cases[] = {{fs::perms::owner_read | fs::perms::owner_write, ""},
                 {fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read, ""},
                 {fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::others_read,
                  "0644"},
                 {fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::group_write,
                  "0660"}};
    for (const auto& c : cases) {
      CAPTURE(c.shown);
      fs::permissions(key, c.mode);
      daemon_process d(dir.file(""), dir.file("lg.db"), {"--tls-cert", cert, "--tls-key", key});
      REQUIRE_MESSAGE(d.port() != 0, d.log());  // a warning, not a refusal: it serves
      const std::string log = d.log();
      if (*c.shown == '\0') {
        CHECK_MESSAGE(log.find("tls_key_mode") == std::string::npos, log);
      } else {
        CHECK_MESSAGE(log.find("tls_key_mode") != std::string::npos, log);
        CHECK_MESSAGE(log.find(std::string("(mode ") + c.shown +
                               "); make it the daemon user's "
                               "alone: chmod 600 " +
                               key) != std::string::npos,
                      log);
      }
    }
  }

  TEST_CASE("TLS: loopguardd refuses to start on a missing, unreadable or mismatched cert or key" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    const std::string cert = dir.file("cert.pem"), key = dir.file("key.pem");
    const std::string other_cert = dir.file("other.pem"), other_key = dir.file("other-key.pem");
    test::write_self_signed(cert, key, "localhost", "IP:127.0.0.1");
    test::write_self_signed(other_cert, other_key, "localhost", "IP:127.0.0.1");
    struct refusal {
      std::vector<std::string> args;
      std::string says;
    };
    const refusal cases[] = {
        {{"--tls-cert", dir.file("none.pem"), "--tls-key", key},
         "--tls-cert " + dir.file("none.pem") + ": cannot read the file"},
        {{"--tls-cert", cert, "--tls-key", dir.file("none.pem")},
         "--tls-key " + dir.file("none.pem") + ": cannot read the file"},
        {{"--tls-cert", cert, "--tls-key", other_key},
         "--tls-key " + other_key + " does not match the certificate in --tls-cert " + cert},
        {{"--tls-cert", key, "--tls-key", key}, "--tls-cert " + key + ": not a PEM certificate"},
        {{"--tls-cert", cert, "--tls-key", cert}, "--tls-key " + cert + ": not a PEM private key"},
        {{"--tls-cert", cert}, "--tls-cert needs --tls-key"},
    };
    for (const auto& c : cases) {
      std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--db", dir.file("lg.db")};
      args.insert(args.end(), c.args.begin(), c.args.end());
      std::string output;
      CHECK(test::run_loopguardd(dir.file(""), args, output, 10s) == 2);
      CHECK_MESSAGE(output.find(c.says) != std::string::npos, output);
    }
    // The config file's keys and the variables say the same as the flags (--print-config).
    std::string printed;
    CHECK(test::run_loopguardd(dir.file(""), {"--print-config"}, printed, 10s,
                               {{"LOOPGUARD_TLS_CERT", cert}, {"LOOPGUARD_TLS_KEY", key}}) == 0);
    CHECK(printed.find("\"cert\": \"" + cert + "\"") != std::string::npos);
    CHECK(printed.find("\"key\": \"" + key + "\"") != std::string::npos);
  }
}
