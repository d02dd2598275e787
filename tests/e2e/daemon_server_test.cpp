// daemon_server driven in-process on a loopback port: open, run, request_stop, finish, and a
// restart on the same SQLite file that restores what was acknowledged.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "../daemon/test_util.hpp"
#include "http_json.hpp"
#include "loopguard/protocol.hpp"
#include "server/daemon_server.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using daemon::daemon_options;
using daemon::daemon_server;
using test::ws_client;

namespace {

daemon_options loopback_options(const std::string& db) {
  daemon_options o;
  o.db = db;
  o.endpoint = {boost::asio::ip::make_address("127.0.0.1"), 0};
  o.drain_timeout = 20s;  // a drain that waits for it fails the test's timeout
  return o;
}

std::string events_batch(std::uint64_t from, std::uint64_t to) {
  protocol::events b;
  for (std::uint64_t s = from; s <= to; ++s) b.items.push_back(test::wire_event(s, s % 5, s));
  return protocol::serialize(b);
}

// run() on a thread of its own; request_stop() and the join at scope exit.
class running {
 public:
  explicit running(daemon_server& d) : d_(d), thread_([&d] { d.run(); }) {}
  ~running() { stop(); }
  running(const running&) = delete;
  running& operator=(const running&) = delete;
  // Requests the stop and waits for run() to return; the time that took.
  std::chrono::steady_clock::duration stop() {
    const auto t0 = std::chrono::steady_clock::now();
    d_.request_stop();
    if (thread_.joinable()) thread_.join();
    return std::chrono::steady_clock::now() - t0;
  }

 private:
  daemon_server& d_;
  std::thread thread_;
};

}  // namespace

TEST_SUITE("daemon_server") {
  TEST_CASE("request_stop drains on the last close, finish checkpoints, a restart restores" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    const auto options = loopback_options(dir.file("lg.db"));
    std::string before;
    {
      daemon_server d(options);
      REQUIRE(d.open().ok());
      const auto port = d.local_endpoint().port();
      REQUIRE(port != 0);
      running r(d);
      ws_client w0(port), w1(port);
      REQUIRE(w0.hello("s", "w0", "i0") == 0u);
      REQUIRE(w1.hello("s", "w1", "i1") == 0u);
      w0.send(events_batch(1, 30));
      w1.send(events_batch(1, 12));
      REQUIRE(w0.wait_ack(30, 5s));
      REQUIRE(w1.wait_ack(12, 5s));
      before = test::digest_over_http(port, "s");
      CHECK(before.size() == 16);  // a digest, not "HTTP <status>"
      const auto took = r.stop();
      CHECK(w0.wait_closed(5s) == 1001);  // going away
      CHECK(w1.wait_closed(5s) == 1001);
      // The last close ended the drain, not the 20 s timeout.
      CHECK(took < 10s);
      CHECK(d.finish().ok());
    }
    daemon_server again(options);
    REQUIRE(again.open().ok());
    running r(again);
    const auto port = again.local_endpoint().port();
    CHECK(test::digest_over_http(port, "s") == before);
    ws_client w0(port);
    CHECK(w0.hello("s", "w0", "i0") == 30u);
    ws_client w1(port);
    CHECK(w1.hello("s", "w1", "i1") == 12u);
  }

  TEST_CASE("a stop requested with no connection open ends at once" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_server d(loopback_options(dir.file("lg.db")));
    REQUIRE(d.open().ok());
    d.request_stop();  // before run(): run() returns once it has drained
    d.request_stop();  // any number of times
    const auto t0 = std::chrono::steady_clock::now();
    d.run();
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);
    CHECK(d.finish().ok());
  }

  TEST_CASE("open names what it refuses" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_server first(loopback_options(dir.file("a.db")));
    REQUIRE(first.open().ok());
    auto taken = loopback_options(dir.file("b.db"));
    taken.endpoint = first.local_endpoint();
    daemon_server second(taken);
    const auto s = second.open();
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("cannot bind") != std::string::npos);

    daemon_server no_dir(loopback_options(dir.file("missing/dir/lg.db")));
    CHECK_FALSE(no_dir.open().ok());

    // The store opens ":memory:" for tests; a daemon on it would acknowledge what it never keeps.
    daemon_server in_memory(loopback_options(":memory:"));
    const auto m = in_memory.open();
    CHECK_FALSE(m.ok());
    CHECK(m.message() == "--db :memory: would keep nothing across a restart; give a file");
  }
}
