// Many and slow clients against the real daemon (docs/operations.md, "Limits"): a slow HTTP
// upgrade (slowloris) is dropped at the request deadline, thousands of WebSocket connections are
// each welcomed or refused with too_many_connections past the limit; meanwhile other workers are
// served without disruption, and the daemon's memory and descriptors stay bounded.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "../daemon/test_util.hpp"
#include "daemon_process.hpp"
#include "loopguard/protocol.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::ws_client;
using steady = std::chrono::steady_clock;

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;

// Memory bounds are for the Release daemon; under AddressSanitizer (redzones, a quarantine of
// freed blocks up to 256 MiB) the same daemon holds several times more.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kMemoryFactor = 8;
#else
constexpr long kMemoryFactor = 1;
#endif

// VmRSS of a process in KiB (0 when unreadable) and its open descriptors.
long resident_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}
long open_fds(pid_t pid) {
  long n = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++n;
  }
  return n;
}

void raise_fd_limit_to(rlim_t want) {
  rlimit l{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &l) == 0);
  REQUIRE_MESSAGE(l.rlim_max >= want, "the hard open-file limit is below " << want);
  l.rlim_cur = l.rlim_max;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &l) == 0);
}

// A plain TCP connection to the daemon (blocking writes, reads polled).
int tcp_connect(unsigned short port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// Whether the peer closed `fd` (EOF or reset); never blocks.
bool peer_closed(int fd) {
  char c = 0;
  const auto n = ::recv(fd, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// A worker that sends one event every 20 ms for as long as `run` holds and checks each is
// acknowledged: no disruption means no error, no close, and every event acknowledged.
class steady_worker {
 public:
  steady_worker(unsigned short port, const std::string& name) : c_(port) {
    REQUIRE(c_.hello("steady", name, "i") == 0u);
    thread_ = std::thread([this] {
      while (run_) {
        protocol::events b;
        b.items.push_back(test::wire_event(++sent_, 1 + sent_ % 7, double(sent_), 3));
        c_.send(json::parse(protocol::serialize(b)));
        std::this_thread::sleep_for(20ms);
      }
    });
  }
  ~steady_worker() { stop(); }
  steady_worker(const steady_worker&) = delete;
  steady_worker& operator=(const steady_worker&) = delete;
  void stop() {
    run_ = false;
    if (thread_.joinable()) thread_.join();
  }
  // Stops, then: every event acknowledged within 10 s, and no error received.
  void check_undisturbed() {
    stop();
    CHECK(sent_ > 10);
    CHECK(c_.wait_ack(sent_, 10s));
    CHECK(c_.received("error").empty());
  }

 private:
  ws_client c_;
  std::atomic<bool> run_{true};
  std::uint64_t sent_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_SUITE("e2e many clients") {
  TEST_CASE(
      "slowloris: upgrade requests sent a byte at a time are dropped at the request deadline, "
      "other workers are served" *
      doctest::timeout(60)) {
    raise_fd_limit_to(1024);
    test::temp_dir dir;
    const auto config = dir.file("c.json");
    std::ofstream(config) << R"({"limits": {"request_timeout_ms": 2000}})";
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", config});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    steady_worker steady(d.port(), "steady");
    const long fds_before = open_fds(d.pid());
    const long rss_before = resident_kib(d.pid());

    // 200 slow clients, one byte each every 20 ms: half send headers that never end, half a whole
    // upgrade request (about 170 bytes) that would end after about 3.4 s.
    constexpr int kSlow = 200;
    const std::string upgrade =
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        "X-Pad: 0123456789\r\n\r\n";
    const std::string endless = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " +
                                std::string(4000, 'a');  // 4000 bytes: never a header's end
    std::vector<int> fds;
    for (int i = 0; i < kSlow; ++i) fds.push_back(tcp_connect(d.port()));
    const auto start = steady::now();
    std::vector<double> closed_after(kSlow, -1);
    int open = kSlow;
    for (std::size_t byte = 0; open > 0 && steady::now() - start < 15s; ++byte) {
      for (int i = 0; i < kSlow; ++i) {
        auto& at = closed_after[static_cast<std::size_t>(i)];
        if (at >= 0) continue;
        const int fd = fds[static_cast<std::size_t>(i)];
        const std::string& text = i % 2 == 0 ? endless : upgrade;
        if (peer_closed(fd)) {
          at = std::chrono::duration<double>(steady::now() - start).count();
          --open;
        } else if (byte < text.size()) {
          (void)::send(fd, text.data() + byte, 1, MSG_NOSIGNAL);
        }
      }
      std::this_thread::sleep_for(20ms);
    }
    for (int fd : fds) ::close(fd);
    CHECK(open == 0);
    for (double at : closed_after) {
      CHECK(at >= 1.5);  // not before the deadline (2 s from the first byte)
      CHECK(at <= 6.0);  // soon after it (open == 0 above: none finished its upgrade)
    }
    // Descriptors come back, memory stayed bounded, the steady worker never noticed.
    long fds_after = open_fds(d.pid());
    for (int i = 0; i < 50 && fds_after > fds_before; ++i) {
      std::this_thread::sleep_for(100ms);
      fds_after = open_fds(d.pid());
    }
    CHECK(fds_after <= fds_before);
    CHECK(resident_kib(d.pid()) - rss_before < kMemoryFactor * 16 * 1024);
    steady.check_undisturbed();
    std::string body;
    CHECK(test::http_get(d.port(), "/healthz", body) == 200);
  }

  TEST_CASE(
      "2500 WebSocket connections: each welcomed up to the limit or refused with "
      "too_many_connections, other workers undisturbed" *
      doctest::timeout(90)) {
    constexpr int kConnections = 2500;
    constexpr int kLimit = 2000;
    raise_fd_limit_to(kConnections + 200);
    test::temp_dir dir;
    const auto config = dir.file("c.json");
    std::ofstream(config) << R"({"limits": {"max_connections": )" << kLimit << "}}";
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--config", config},
                     {.open_files = kConnections + 500});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    // Two workers stream events all along (they hold two of the connections).
    steady_worker a(d.port(), "a"), b(d.port(), "b");
    const long rss_before = resident_kib(d.pid());

    net::io_context ioc;
    using ws_stream = beast::websocket::stream<net::ip::tcp::socket>;
    std::vector<std::unique_ptr<ws_stream>> welcomed, refused;
    const auto start = steady::now();
    for (int i = 0; i < kConnections; ++i) {
      auto ws = std::make_unique<ws_stream>(ioc);
      ws->next_layer().connect({net::ip::make_address("127.0.0.1"), d.port()});
      ws->handshake("127.0.0.1", "/ws");
      ws->text(true);
      ws->write(net::buffer(json{
          {"type", "hello"},
          {"version", protocol::kVersion},
          {"swarm", "many"},
          {"worker", test::worker_name(i)},
          {"incarnation", "i"}}.dump()));
      beast::flat_buffer buf;
      ws->read(buf);
      const auto reply = json::parse(beast::buffers_to_string(buf.data()));
      if (reply["type"] == "welcome") {
        welcomed.push_back(std::move(ws));
      } else {
        REQUIRE_MESSAGE(reply["code"] == "too_many_connections", reply.dump());
        refused.push_back(std::move(ws));
      }
    }
    const double connect_s = std::chrono::duration<double>(steady::now() - start).count();
    MESSAGE(kConnections, " connections with hellos in ", connect_s, " s");
    CHECK(welcomed.size() == kLimit - 2);
    CHECK(refused.size() == kConnections - kLimit + 2);
    // Each refused one is closed with 1013 (try again later).
    for (std::size_t i = 0; i < refused.size(); i += 50) {
      beast::flat_buffer buf;
      beast::error_code ec;
      refused[i]->read(buf, ec);
      CHECK(ec == beast::websocket::error::closed);
      CHECK(refused[i]->reason().code == beast::websocket::close_code::try_again_later);
    }
    refused.clear();
    // The welcomed ones are served: one of them sends an event and gets its ack.
    const std::string event = R"({"type":"events","events":[{"seq":1,"tool":"t",)"
                              R"("exact":"0000000000000001","structural":"0000000000000002",)"
                              R"("t":1}]})";
    welcomed.back()->write(net::buffer(event));
    beast::flat_buffer buf;
    welcomed.back()->read(buf);
    const auto ack = beast::buffers_to_string(buf.data());
    CHECK_MESSAGE(json::parse(ack)["type"] == "ack", ack);
    const long rss_connected = resident_kib(d.pid());
    MESSAGE("daemon RSS ", rss_before / 1024, " MiB before, ", rss_connected / 1024, " MiB with ",
            kLimit, " connections");
    // Bounded: well under 64 KiB per connection.
    CHECK(rss_connected - rss_before < kMemoryFactor * kLimit * 64);
    CHECK(open_fds(d.pid()) < kLimit + 200);
    std::string body;
    CHECK(test::http_get(d.port(), "/healthz", body) == 200);
    a.check_undisturbed();
    b.check_undisturbed();
    welcomed.clear();
  }
}
