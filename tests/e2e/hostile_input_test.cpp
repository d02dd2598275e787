// End to end: bytes from a hostile or broken worker against the real loopguardd. Each case is a
// crash or a silent loss that a single message used to cause.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <signal.h>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "loopguard/protocol.hpp"
#include "loopguard/utf8.hpp"
#include "store/event_log.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::ws_client;

namespace {

constexpr std::string_view kFffd = "\xEF\xBF\xBD";

// GET `target`: the status, and the body, which must be valid UTF-8 and JSON.
json get_valid_json(unsigned short port, const std::string& target, int expect = 200) {
  std::string body;
  CHECK(test::http_get(port, target, body) == expect);
  CHECK(utf8::is_valid(body));
  auto j = json::parse(body, nullptr, false);
  CHECK_FALSE(j.is_discarded());
  return j;
}

// `n` events of one call whose tool name is `tool` (raw bytes), as a binary batch.
std::string binary_batch(std::uint64_t first_seq, int n, const std::string& tool) {
  protocol::events b;
  for (int i = 0; i < n; ++i) {
    auto e = test::wire_event(first_seq + static_cast<std::uint64_t>(i), 42, 1.0 + i);
    e.tool = tool;
    e.summary = "arg \xff\xfe";
    b.items.push_back(e);
  }
  return protocol::encode_binary(b);
}

}  // namespace

TEST_SUITE("e2e.hostile_input") {
  TEST_CASE(
      "regression: a binary batch whose tool is not UTF-8 crashed the daemon and every "
      "restart" *
      doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string db = dir.file("lg.db");
    {
      daemon_process d(dir.file(""), db);
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      ws_client a(d.port()), b(d.port());
      REQUIRE(a.hello("s", "w0", "inc") == 0u);
      REQUIRE(b.hello("s", "w1", "inc") == 0u);
      a.send(binary_batch(1, 6, "\xff\xfe"), true);
      b.send(binary_batch(1, 6, "\xff\xfe"), true);
      REQUIRE(a.wait_ack(6, 10s));
      REQUIRE(b.wait_ack(6, 10s));
      // 12 calls of one fingerprint by 2 workers: the global verdict names the repaired tool.
      const auto v = a.next_of("verdict", 10s);
      REQUIRE(v);
      CHECK(v->at("tool") == std::string(kFffd) + std::string(kFffd));
      const auto detail = get_valid_json(d.port(), "/api/swarms/s");
      CHECK(detail["top"][0]["tool"] == std::string(kFffd) + std::string(kFffd));
      get_valid_json(d.port(), "/api/swarms");
      std::string metrics;
      CHECK(test::http_get(d.port(), "/metrics", metrics) == 200);
      CHECK(utf8::is_valid(metrics));
      d.signal(SIGKILL);
      CHECK(d.wait(10s) == 128 + SIGKILL);
    }
    daemon_process again(dir.file(""), db);
    REQUIRE_MESSAGE(again.port() != 0, again.log());
    const auto detail = get_valid_json(again.port(), "/api/swarms/s");
    CHECK(detail["top"][0]["calls"] == 12);
  }

  TEST_CASE(
      "JSON frames: identifiers that are not UTF-8 are refused with invalid_utf8, content "
      "is repaired" *
      doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    SUBCASE("a lone surrogate in the swarm name") {
      ws_client c(d.port());
      c.send(std::string(R"({"type":"hello","version":1,"swarm":"s\udcff","worker":"w",)"
                         R"("incarnation":"i"})"));
      const auto e = c.next_of("error", 10s);
      REQUIRE(e);
      CHECK(e->at("code") == "invalid_utf8");
      CHECK(e->at("message").get<std::string>().find("swarm") != std::string::npos);
      CHECK(c.wait_closed(10s) == 1008);
    }
    SUBCASE("invalid bytes in a text frame are refused by the WebSocket layer (1007)") {
      ws_client c(d.port());
      c.send(std::string("{\"type\":\"hello\",\"swarm\":\"\xff\"}"));
      CHECK(c.wait_closed(10s) == 1007);
    }
    SUBCASE("a lone surrogate in a tool name is repaired, acknowledged and shown") {
      ws_client c(d.port());
      REQUIRE(c.hello("j", "w", "i") == 0u);
      c.send(std::string(R"({"type":"events","events":[{"seq":1,"tool":"t\udcff",)"
                         R"("exact":"0000000000000001","structural":"0000000000000002","t":1}]})"));
      REQUIRE(c.wait_ack(1, 10s));
      const auto detail = get_valid_json(d.port(), "/api/swarms/j");
      CHECK(detail["top"][0]["tool"] == "t" + std::string(kFffd));
    }
    SUBCASE("a binary event whose time is not finite is refused") {
      ws_client c(d.port());
      REQUIRE(c.hello("n", "w", "i") == 0u);
      protocol::events b;
      b.items.push_back(test::wire_event(1, 1, std::numeric_limits<double>::quiet_NaN()));
      c.send(protocol::encode_binary(b), true);
      const auto e = c.next_of("error", 10s);
      REQUIRE(e);
      CHECK(e->at("code") == "bad_message");
      CHECK(e->at("message").get<std::string>().find("finite") != std::string::npos);
    }
    SUBCASE("a swarm id in the API path that is not UTF-8 is a 400") {
      get_valid_json(d.port(), "/api/swarms/a%FF", 400);
    }
    // Whatever happened above, the daemon still serves everyone else.
    ws_client other(d.port());
    REQUIRE(other.hello("other", "w", "i") == 0u);
    get_valid_json(d.port(), "/api/swarms");
  }

  TEST_CASE("a database that already holds names that are not UTF-8 is repaired on restore" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string db = dir.file("lg.db");
    {
      // Written as builds before the boundary checks could write it.
      auto opened = daemon::sqlite_checkpoint_store::open(db);
      REQUIRE_MESSAGE(opened.has_value(), opened.error().message());
      auto& store = *opened;
      daemon::fingerprint_row row;
      row.swarm = "bad\xff";
      row.key = {daemon::fingerprint_kind::exact, 7};
      row.stats.tool = "\xff\xfe";
      row.stats.summary = "\xc3";
      row.stats.calls = row.stats.counted = 3;
      row.stats.workers = {0};
      // The row goes to the rows file as generation 1, made current below.
      auto& rows = store->rows();
      REQUIRE(rows.begin().ok());
      REQUIRE(rows.stage_fingerprint(1, row).ok());
      REQUIRE(rows.fold_staged(1, 10).has_value());
      REQUIRE(rows.commit().ok());
      REQUIRE(store->begin().ok());
      REQUIRE(store->put_swarm({"bad\xff", 5}).ok());
      REQUIRE(store->put_worker({"bad\xff", 0, "w\xfe"}).ok());
      REQUIRE(store->flip(1, 0).ok());
      daemon::event_log_writer log;
      log.event({"log\xfe", "w\xff", "tool\xff", "", 9, 10, std::nullopt, true, 1});
      REQUIRE(store->append_log(log.take()).ok());
      REQUIRE(store->commit().ok());
    }
    daemon_process d(dir.file(""), db);
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    CHECK(d.log().find("repaired") != std::string::npos);
    const auto list = get_valid_json(d.port(), "/api/swarms");
    REQUIRE(list["swarms"].size() == 2);
    const auto bad = get_valid_json(d.port(), "/api/swarms/bad%EF%BF%BD");
    CHECK(bad["top"][0]["tool"] == std::string(kFffd) + std::string(kFffd));
    CHECK(bad["worker_names"][0] == "w" + std::string(kFffd));
    const auto from_log = get_valid_json(d.port(), "/api/swarms/log%EF%BF%BD");
    CHECK(from_log["top"][0]["tool"] == "tool" + std::string(kFffd));
  }

  TEST_CASE("regression: a hello sent in the same write as the upgrade request is answered" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    namespace net = boost::asio;
    net::io_context ioc;
    net::ip::tcp::socket sock(ioc);
    sock.connect({net::ip::make_address("127.0.0.1"), d.port()});
    timeval tv{10, 0};
    ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const std::string hello =
        R"({"type":"hello","version":1,"swarm":"s","worker":"w","incarnation":"i"})";
    REQUIRE(hello.size() < 126);
    std::string bytes =
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    // One masked text frame (RFC 6455 5.2), in the same write.
    const unsigned char mask[4] = {1, 2, 3, 4};
    bytes += static_cast<char>(0x81);
    bytes += static_cast<char>(0x80 | hello.size());
    bytes.append(reinterpret_cast<const char*>(mask), 4);
    for (std::size_t i = 0; i < hello.size(); ++i)
      bytes += static_cast<char>(hello[i] ^ mask[i % 4]);
    net::write(sock, net::buffer(bytes));
    std::string got;
    char buf[4096];
    while (got.find("\"welcome\"") == std::string::npos) {
      boost::system::error_code ec;
      const std::size_t n = sock.read_some(net::buffer(buf), ec);
      if (ec) break;
      got.append(buf, n);
    }
    CHECK(got.starts_with("HTTP/1.1 101"));
    CHECK(got.find("\"welcome\"") != std::string::npos);
  }

  TEST_CASE("a frame with a repeated key is refused with bad_message naming the key" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    SUBCASE("two types in the hello") {
      ws_client c(d.port());
      c.send(std::string(R"({"type":"events","type":"hello","version":1,"swarm":"s",)"
                         R"("worker":"w","incarnation":"i"})"));
      const auto e = c.next_of("error", 10s);
      REQUIRE(e);
      CHECK(e->at("code") == "bad_message");
      CHECK(e->at("message") == R"(duplicate key "type")");
      CHECK(c.wait_closed(10s) == 1008);
    }
    SUBCASE("an event with two sequence numbers: nothing of the batch is applied") {
      ws_client c(d.port());
      REQUIRE(c.hello("s", "w", "i") == 0u);
      c.send(std::string(R"({"type":"events","events":[{"seq":1,"tool":"t","exact":)"
                         R"("0000000000000001","structural":"0000000000000002","t":1,"seq":2}]})"));
      const auto e = c.next_of("error", 10s);
      REQUIRE(e);
      CHECK(e->at("code") == "bad_message");
      CHECK(e->at("message") == R"(duplicate key "seq")");
      CHECK(c.wait_closed(10s) == 1008);
      CHECK(c.received("ack").empty());
      ws_client again(d.port());
      CHECK(again.hello("s", "w", "i") == 0u);  // nothing was applied
    }
    ws_client other(d.port());
    REQUIRE(other.hello("other", "w", "i") == 0u);
  }
}
