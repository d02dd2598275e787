// `loopguard inspect` against the real loopguardd on loopback, after `loopguard simulate` fed it
// a swarm; and against a one-shot HTTP server on loopback for the answers a loopguardd gives
// only in trouble (401, a body that is not its API's, silence).
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "../daemon/test_util.hpp"
#include "cli_process.hpp"
#include "daemon_process.hpp"
#include "loopguard/utf8.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::cli_result;
using test::daemon_process;
using test::lines_of;
using test::run_loopguard;

namespace {

// A '/' and a non-ASCII letter: the name must be percent-encoded in the request path.
const std::string kSwarm = "team/\u00e9quipe";

std::string http_url(const daemon_process& d) {
  return "http://127.0.0.1:" + std::to_string(d.port());
}

// Four workers, three of them stuck on one search: two verdicts (exact and structural).
void feed_swarm(const test::temp_dir& dir, const daemon_process& d) {
  const cli_result r = run_loopguard(
      dir.file(""),
      {"simulate", "--daemon", "ws://127.0.0.1:" + std::to_string(d.port()), "--workers", "4",
       "--stuck", "3", "--rate", "20", "--duration", "1.5", "--tokens", "100", "--swarm", kSwarm});
  REQUIRE_MESSAGE(r.exit == 0, r.err);
}

// The lines of the table whose header line starts with `header`, up to the next blank line.
std::vector<std::string> table(const std::string& out, const std::string& header) {
  std::vector<std::string> rows;
  bool in = false;
  for (const auto& l : lines_of(out)) {
    if (!in && l.rfind(header, 0) == 0) in = true;
    if (in && l.empty()) break;
    if (in) rows.push_back(l);
  }
  return rows;
}

// Code point offset of the end of `column` in the header: where a right-aligned cell ends.
std::size_t column_end(const std::string& header, const std::string& column) {
  const auto at = header.find(column);
  REQUIRE(at != std::string::npos);
  return utf8::decode(header.substr(0, at)).size() + column.size();
}

// Every row's cell in a right-aligned column ends where the header's name ends: a digit there,
// a space or the line's end after.
void check_right_aligned(const std::vector<std::string>& rows, const std::string& column) {
  REQUIRE(rows.size() >= 2);
  const std::size_t end = column_end(rows[0], column);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    CAPTURE(rows[i]);
    const std::u32string row = utf8::decode(rows[i]);
    REQUIRE(row.size() >= end);
    CHECK((row[end - 1] >= U'0' && row[end - 1] <= U'9'));
    CHECK((row.size() == end || row[end] == U' '));
  }
}

// Answers one HTTP request on a loopback port with `response` (nothing: holds the connection
// open until the client goes), then closes. Bounded: gives up 20 s after it starts.
class one_shot_server {
 public:
  explicit one_shot_server(std::string response) : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~one_shot_server() {
    thread_.join();
    ::close(fd_);
  }
  one_shot_server(const one_shot_server&) = delete;
  one_shot_server& operator=(const one_shot_server&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& request() const { return request_; }  // after the client is done

 private:
  static bool wait_readable(int fd, std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(left.count())) == 1;
  }
  void serve() {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    if (!wait_readable(fd_, deadline)) return;
    const int conn = ::accept(fd_, nullptr, nullptr);
    if (conn < 0) return;
    char buf[4096];
    // Read the request; without a response, read on until the client closes.
    while (wait_readable(conn, deadline)) {
      const ssize_t n = ::read(conn, buf, sizeof buf);
      if (n <= 0) break;
      request_.append(buf, static_cast<std::size_t>(n));
      if (!response_.empty() && request_.find("\r\n\r\n") != std::string::npos) break;
    }
    if (!response_.empty()) (void)!::write(conn, response_.data(), response_.size());
    ::close(conn);
  }

  std::string response_, request_;
  int fd_ = -1;
  unsigned short port_ = 0;
  std::thread thread_;
};

std::string http_response(const std::string& status_line, const std::string& body) {
  return "HTTP/1.1 " + status_line +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

// The command failed with `exit`, printed nothing on stdout and one line on stderr starting so.
void check_one_line(const cli_result& r, int exit, const std::string& start) {
  CAPTURE(r.err);
  CHECK(r.exit == exit);
  CHECK(r.out.empty());
  CHECK(lines_of(r.err).size() == 1);
  CHECK(r.err.ends_with('\n'));
  CHECK(r.err.rfind(start, 0) == 0);
}

}  // namespace

TEST_SUITE("inspect") {
  TEST_CASE("the swarm, its top fingerprint and its verdicts, as tables and as JSON" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    feed_swarm(dir, d);

    const cli_result all = run_loopguard(dir.file(""), {"inspect", "--daemon", http_url(d)});
    REQUIRE_MESSAGE(all.exit == 0, all.err);
    CHECK(all.err.empty());
    const auto swarms = table(all.out, "SWARM");
    REQUIRE(swarms.size() == 2);
    CHECK(swarms[1].rfind(kSwarm + "  ", 0) == 0);
    check_right_aligned(swarms, "CALLS");
    // One swarm: its detail follows.
    CHECK(all.out.find("swarm \"" + kSwarm + "\": 4 workers") != std::string::npos);

    // ws:// works as the other commands take it; --swarm gives the detail alone.
    const cli_result one = run_loopguard(
        dir.file(""),
        {"inspect", "--daemon", "ws://127.0.0.1:" + std::to_string(d.port()), "--swarm", kSwarm});
    REQUIRE_MESSAGE(one.exit == 0, one.err);
    CHECK(one.out.rfind("swarm \"" + kSwarm + "\": 4 workers", 0) == 0);
    const auto workers = table(one.out, "WORKER ");
    CHECK(workers.size() == 5);
    const auto top = table(one.out, "KIND ");
    REQUIRE(top.size() >= 3);
    CHECK(top[1].find("search") != std::string::npos);
    CHECK(top[1].find("critical") != std::string::npos);
    CHECK(top[1].find("\u2026") != std::string::npos);  // the long summary is cut
    check_right_aligned(top, "CALLS");
    check_right_aligned(top, "WORKERS");
    const auto verdicts = table(one.out, "LEVEL ");
    CHECK(verdicts.size() == 3);  // exact and structural
    for (std::size_t i = 1; i < verdicts.size(); ++i) {
      CHECK(verdicts[i].rfind("critical", 0) == 0);
      CHECK(verdicts[i].find("search") != std::string::npos);
    }
    CHECK(utf8::is_valid(one.out));

    const cli_result list_json =
        run_loopguard(dir.file(""), {"inspect", "--daemon", http_url(d), "--json"});
    REQUIRE_MESSAGE(list_json.exit == 0, list_json.err);
    CHECK(lines_of(list_json.out).size() == 1);
    const json l = json::parse(list_json.out);
    REQUIRE(l["swarms"].size() == 1);
    CHECK(l["swarms"][0]["swarm"] == kSwarm);
    CHECK(l["swarms"][0]["workers"] == 4);

    const cli_result detail_json = run_loopguard(
        dir.file(""), {"inspect", "--daemon", http_url(d), "--swarm", kSwarm, "--json"});
    REQUIRE_MESSAGE(detail_json.exit == 0, detail_json.err);
    const json j = json::parse(detail_json.out);
    CHECK(j["swarm"] == kSwarm);
    CHECK(j["top"][0]["tool"] == "search");
    CHECK(j["verdicts"].size() == 2);
  }

  TEST_CASE("no swarms yet: a line saying so" * doctest::timeout(30)) {
    test::temp_dir dir;
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const cli_result r = run_loopguard(dir.file(""), {"inspect", "--daemon", http_url(d)});
    CHECK_MESSAGE(r.exit == 0, r.err);
    CHECK(r.out == "no swarms\n");
  }

  TEST_CASE("an unknown swarm, an unreachable daemon, a bad URL: one line and an exit status" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    // A port bound here but not listening: connecting to it is refused, and no other test
    // running meanwhile can take it (a stopped daemon's port could be, and then answered).
    const int held = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(held >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(held, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(held, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    const unsigned short unused = ntohs(addr.sin_port);
    struct closer {
      int fd;
      ~closer() { ::close(fd); }
    } close_held{held};
    daemon_process d(dir.file(""), dir.file("lg.db"));
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const std::string at = "127.0.0.1:" + std::to_string(d.port());
    check_one_line(
        run_loopguard(dir.file(""), {"inspect", "--daemon", http_url(d), "--swarm", "nosuch"}), 1,
        "loopguard inspect: no swarm \"nosuch\" on " + at + "\n");
    const std::string gone = "127.0.0.1:" + std::to_string(unused);
    check_one_line(run_loopguard(dir.file(""), {"inspect", "--daemon", "http://" + gone}), 3,
                   "loopguard inspect: cannot reach the daemon at " + gone + ": connect: ");
    // https:// to a daemon without TLS: the handshake fails (the daemon answers in plain HTTP).
    check_one_line(run_loopguard(dir.file(""), {"inspect", "--daemon", "wss://" + at}), 3,
                   "loopguard inspect: cannot reach the daemon at " + at + ": TLS handshake: ");
    check_one_line(run_loopguard(dir.file(""), {"inspect", "--daemon", "ftp://" + at}), 2,
                   "loopguard inspect: --daemon: expected http(s)://HOST:PORT, got \"ftp://" + at +
                       "\": the scheme must be");
    check_one_line(run_loopguard(dir.file(""), {"inspect", "--daemon", "http://" + at + "/api"}), 2,
                   "loopguard inspect: --daemon: expected http(s)://HOST:PORT");
  }

  TEST_CASE("the token goes as a Bearer header and a 401 is one line naming the token" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    one_shot_server refusing(http_response("401 Unauthorized", R"({"error":"unauthorized"})"));
    const cli_result r =
        run_loopguard(dir.file(""), {"inspect", "--daemon", refusing.url(), "--token", "wrong"});
    check_one_line(r, 3, "loopguard inspect: the daemon at 127.0.0.1:");
    CHECK(r.err.find("refused the token (401 Unauthorized)") != std::string::npos);
    CHECK(refusing.request().rfind("GET /api/swarms HTTP/1.1\r\n", 0) == 0);
    CHECK(refusing.request().find("\r\nAuthorization: Bearer wrong\r\n") != std::string::npos);

    one_shot_server asking(http_response("401 Unauthorized", R"({"error":"unauthorized"})"));
    const cli_result no_token = run_loopguard(dir.file(""), {"inspect", "--daemon", asking.url()});
    check_one_line(no_token, 3, "loopguard inspect: the daemon at 127.0.0.1:");
    CHECK(no_token.err.find("wants a token (401 Unauthorized): give it with --token") !=
          std::string::npos);
    CHECK(asking.request().find("Authorization:") == std::string::npos);
  }

  TEST_CASE("an answer that is not the API's, or none within --timeout: one line" *
            doctest::timeout(30)) {
    test::temp_dir dir;
    one_shot_server html(http_response("200 OK", "<html>hello</html>"));
    const cli_result r = run_loopguard(dir.file(""), {"inspect", "--daemon", html.url()});
    check_one_line(r, 3, "loopguard inspect: the daemon at 127.0.0.1:");
    CHECK(r.err.find("sent a malformed answer to GET /api/swarms: not JSON: ") !=
          std::string::npos);

    one_shot_server wrong_shape(http_response("200 OK", R"({"swarms":[{"swarm":7}]})"));
    const cli_result shape =
        run_loopguard(dir.file(""), {"inspect", "--daemon", wrong_shape.url()});
    check_one_line(shape, 3, "loopguard inspect: the daemon at 127.0.0.1:");
    CHECK(shape.err.find("swarms[0].swarm: expected a string, got 7") != std::string::npos);

    one_shot_server silent("");
    const auto start = std::chrono::steady_clock::now();
    const cli_result quiet =
        run_loopguard(dir.file(""), {"inspect", "--daemon", silent.url(), "--timeout", "0.5"});
    check_one_line(quiet, 3, "loopguard inspect: cannot reach the daemon at 127.0.0.1:");
    CHECK(quiet.err.find(": read: no answer within 0.5 s") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
  }

  TEST_CASE("a daemon with a token file refuses a wrong token" * doctest::timeout(30)) {
    test::temp_dir dir;
    const std::string token = dir.file("token");
    { std::ofstream(token) << "right-token\n"; }
    std::filesystem::permissions(
        token, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    daemon_process d(dir.file(""), dir.file("lg.db"), {"--token-file", token});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    const cli_result right =
        run_loopguard(dir.file(""), {"inspect", "--daemon", http_url(d), "--token", "right-token"});
    REQUIRE_MESSAGE(right.exit == 0, right.err);
    check_one_line(
        run_loopguard(dir.file(""), {"inspect", "--daemon", http_url(d), "--token", "wrong"}), 3,
        "loopguard inspect: the daemon at 127.0.0.1:" + std::to_string(d.port()) +
            " refused the token (401 Unauthorized)");
  }

  TEST_CASE(
      "several daemons: one table saying which holds each swarm, a swarm found where it is, "
      "an unreachable daemon reported and the others shown" *
      doctest::timeout(60)) {
    test::temp_dir dir;
    daemon_process d1(dir.file(""), dir.file("d1.db")), d2(dir.file(""), dir.file("d2.db"));
    REQUIRE_MESSAGE(d1.port() != 0, d1.log());
    REQUIRE_MESSAGE(d2.port() != 0, d2.log());
    const auto feed = [&](const daemon_process& d, const std::string& swarm) {
      const cli_result r = run_loopguard(
          dir.file(""),
          {"simulate", "--daemon", "ws://127.0.0.1:" + std::to_string(d.port()), "--workers", "2",
           "--stuck", "1", "--rate", "20", "--duration", "0.5", "--swarm", swarm});
      REQUIRE_MESSAGE(r.exit == 0, r.err);
    };
    feed(d1, "alpha");
    feed(d2, "beta");
    const std::string a1 = "127.0.0.1:" + std::to_string(d1.port());
    const std::string a2 = "127.0.0.1:" + std::to_string(d2.port());
    std::string dead;
    {
      daemon_process d3(dir.file(""), dir.file("d3.db"));
      REQUIRE(d3.port() != 0);
      dead = "127.0.0.1:" + std::to_string(d3.port());
      d3.signal(SIGTERM);
      REQUIRE(d3.wait(10s) == 0);
    }

    // The merged list: one row per swarm with the daemon holding it.
    cli_result r = run_loopguard(
        dir.file(""), {"inspect", "--daemon", "http://" + a1, "--daemon", "http://" + a2});
    REQUIRE_MESSAGE(r.exit == 0, r.err);
    const auto rows = table(r.out, "SWARM");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].rfind("SWARM  DAEMON", 0) == 0);
    CHECK(rows[1].rfind("alpha  " + a1, 0) == 0);
    CHECK(rows[2].rfind("beta   " + a2, 0) == 0);
    CHECK(r.err.empty());

    // One unreachable: reported on stderr, exit 3, the others still listed.
    r = run_loopguard(dir.file(""), {"inspect", "--daemon", "http://" + a1, "--daemon",
                                     "http://" + dead, "--daemon", "http://" + a2});
    CHECK(r.exit == 3);
    CHECK(table(r.out, "SWARM").size() == 3);
    CHECK(r.err.find("loopguard inspect: cannot reach the daemon at " + dead) != std::string::npos);
    r = run_loopguard(dir.file(""), {"inspect", "--json", "--daemon", "http://" + a1, "--daemon",
                                     "http://" + dead, "--daemon", "http://" + a2});
    CHECK(r.exit == 3);
    const auto doc = json::parse(r.out);
    REQUIRE(doc["swarms"].size() == 2);
    CHECK(doc["swarms"][0]["swarm"] == "alpha");
    CHECK(doc["swarms"][0]["daemon"] == a1);
    CHECK(doc["swarms"][1]["daemon"] == a2);
    REQUIRE(doc["unreachable"].size() == 1);
    CHECK(doc["unreachable"][0]["daemon"] == dead);

    // One swarm, looked up on whichever daemon has it.
    r = run_loopguard(dir.file(""), {"inspect", "--swarm", "beta", "--daemon", "http://" + dead,
                                     "--daemon", "http://" + a1, "--daemon", "http://" + a2});
    CHECK(r.exit == 0);
    CHECK(r.out.rfind("daemon " + a2 + "\nswarm \"beta\": 2 workers", 0) == 0);
    CHECK(r.err.find("cannot reach the daemon at " + dead) != std::string::npos);
    r = run_loopguard(dir.file(""), {"inspect", "--swarm", "alpha", "--json", "--daemon",
                                     "http://" + a2, "--daemon", "http://" + a1});
    CHECK(r.exit == 0);
    CHECK(json::parse(r.out)["daemon"] == a1);
    CHECK(json::parse(r.out)["swarm"] == "alpha");
    r = run_loopguard(dir.file(""), {"inspect", "--swarm", "gamma", "--daemon", "http://" + a1,
                                     "--daemon", "http://" + a2});
    CHECK(r.exit == 1);
    CHECK(r.err == "loopguard inspect: no swarm \"gamma\" on any of the 2 daemons\n");
    r = run_loopguard(dir.file(""), {"inspect", "--swarm", "gamma", "--daemon", "http://" + a1,
                                     "--daemon", "http://" + dead});
    CHECK(r.exit == 3);
    CHECK(r.err.find("no swarm \"gamma\" on the 1 daemons that answered") != std::string::npos);

    // A cluster file: every server in it, named as there.
    std::ofstream(dir.file("cluster.json"))
        << R"({"servers": [{"name": "d1", "address": ")" << a1
        << R"("}, {"name": "d2", "address": ")" << a2 << R"("}]})";
    r = run_loopguard(dir.file(""), {"inspect", "--cluster", dir.file("cluster.json")});
    REQUIRE_MESSAGE(r.exit == 0, r.err);
    const auto named = table(r.out, "SWARM");
    REQUIRE(named.size() == 3);
    CHECK(named[1].rfind("alpha  d1 ", 0) == 0);
    CHECK(named[2].rfind("beta   d2 ", 0) == 0);
    r = run_loopguard(dir.file(""), {"inspect", "--cluster", dir.file("none.json")});
    CHECK(r.exit == 2);
    CHECK(r.err.find("loopguard inspect: --cluster: " + dir.file("none.json")) !=
          std::string::npos);
    r = run_loopguard(dir.file(""), {"inspect"});
    CHECK(r.exit == 2);
    CHECK(r.err.find("give --daemon URL (repeatable) or --cluster FILE") != std::string::npos);
  }
}
