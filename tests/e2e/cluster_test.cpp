// Two real loopguardd behind a real HAProxy, configured by scripts/cluster.sh (docs/scaling.md):
// every swarm lives on the daemon the ring gives it and on no other, a misrouted worker is
// refused with not_owner, and SIGKILL of one daemon neither moves its swarms to the other nor
// disturbs the other's; after its restart every event is counted exactly once, on its owner.
// Needs haproxy (scripts/setup.sh --all installs it): without it the test fails, it never skips.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "../daemon/test_util.hpp"
#include "child_process.hpp"
#include "cluster/cluster_ring.hpp"
#include "cycling_events.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/daemon_client.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::daemon_process;
using test::digest_over_http;

namespace {

constexpr int kSwarms = 30;
constexpr std::uint64_t kFps = 25;

std::string swarm_id(int i) {
  return "swarm-" + std::to_string(i);
}

// A set of swarms as one sorted, space-separated string (doctest shows it on failure).
std::string joined(const std::set<std::string>& swarms) {
  std::string out;
  for (const auto& s : swarms) out += (out.empty() ? "" : " ") + s;
  return out;
}

// The swarms a daemon's API lists, joined.
std::string swarms_on(unsigned short port) {
  std::string body;
  std::set<std::string> out;
  const int status = test::http_get(port, "/api/swarms", body);
  if (status != 200) return "HTTP " + std::to_string(status) + ": " + body;
  const auto doc = nlohmann::json::parse(body);
  for (const auto& s : doc.at("swarms")) out.insert(s.at("swarm").get<std::string>());
  return joined(out);
}

// The daemon's loopguard_errors_sent_total (error messages sent to workers).
std::uint64_t errors_sent(unsigned short port) {
  std::string body;
  if (test::http_get(port, "/metrics", body) != 200) return 0;
  constexpr std::string_view kName = "\nloopguard_errors_sent_total ";
  const auto at = body.find(kName);
  return at == std::string::npos ? 0 : std::stoull(body.substr(at + kName.size()));
}

// Loopback ports nobody listens on now (bound to port 0 together, then released).
std::vector<unsigned short> free_ports(int n) {
  boost::asio::io_context ioc;
  std::vector<boost::asio::ip::tcp::acceptor> held;
  std::vector<unsigned short> out;
  for (int i = 0; i < n; ++i) {
    held.emplace_back(
        ioc, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    out.push_back(held.back().local_endpoint().port());
  }
  return out;
}

bool accepts(unsigned short port) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s(ioc);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

// haproxy's absolute path (spawn_child execs a path), "" when it is not installed.
std::string haproxy_path() {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"}) {
    const std::string p = std::string(dir) + "/haproxy";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// HAProxy in the foreground, stopped by PID at scope exit.
class haproxy_process {
 public:
  haproxy_process(const std::string& program, const std::string& cfg, const std::string& log)
      : log_(log), pid_(test::spawn_child(program, {"-db", "-f", cfg}, {log, log})) {}
  ~haproxy_process() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    test::finish_child(pid_, 5000ms);
  }
  haproxy_process(const haproxy_process&) = delete;
  haproxy_process& operator=(const haproxy_process&) = delete;
  pid_t pid() const { return pid_; }
  std::string log() const { return test::slurp(log_); }

 private:
  std::string log_;
  pid_t pid_;
};

client_options options_for(unsigned short port, const std::string& swarm) {
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(port);
  o.swarm = swarm;
  o.worker = test::worker_name(0);
  o.outbox = 10000;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  return o;
}

// scripts/cluster.sh --write-only; its exit code, its output in `out`.
int write_cluster_files(const std::string& dir, const std::vector<unsigned short>& ports,
                        std::string& out) {
  const std::string log = dir + "/cluster-sh.log";
  const pid_t pid = test::spawn_child(
      "/bin/bash",
      {std::string(LOOPGUARD_SOURCE_DIR) + "/scripts/cluster.sh", "--write-only", "--daemons", "2",
       "--dir", dir, "--port", std::to_string(ports[0]), "--daemon-ports",
       std::to_string(ports[1]) + "," + std::to_string(ports[2])},
      {log, log, false, {{"LOOPGUARDD", LOOPGUARDD_PATH}}});
  const int code = test::finish_child(pid, 20000ms);
  out = test::slurp(log);
  return code;
}

// scripts/cluster.sh rebalance OLD NEW (the databases beside OLD); its exit code and output.
int rebalance(const std::string& old_file, const std::string& new_file, std::string& out) {
  const std::string log = old_file + ".rebalance.log";
  const pid_t pid = test::spawn_child(
      "/bin/bash",
      {std::string(LOOPGUARD_SOURCE_DIR) + "/scripts/cluster.sh", "rebalance", old_file, new_file},
      {log, log, false, {{"LOOPGUARDD", LOOPGUARDD_PATH}}});
  const int code = test::finish_child(pid, 60000ms);
  out = test::slurp(log);
  return code;
}

// A cluster file of servers d1..dN on `ports` (weight 1 each); `names` picks which.
std::string cluster_json(const std::vector<std::pair<std::string, unsigned short>>& servers) {
  nlohmann::json j;
  j["buckets"] = 1024;
  j["servers"] = nlohmann::json::array();
  for (const auto& [name, port] : servers) {
    j["servers"].push_back({{"name", name}, {"address", "127.0.0.1:" + std::to_string(port)}});
  }
  return j.dump(2);
}

}  // namespace

TEST_SUITE("cluster") {
  TEST_CASE("behind HAProxy every swarm lives on its owner only, through SIGKILL and restart" *
            doctest::timeout(60)) {
    const std::string haproxy = haproxy_path();
    REQUIRE_MESSAGE(!haproxy.empty(),
                    "haproxy is not installed: apt-get install -y haproxy (scripts/setup.sh --all "
                    "installs it); this test fails rather than skips without it");
    test::temp_dir dir;
    const auto ports = free_ports(3);  // HAProxy, d1, d2
    std::string out;
    REQUIRE_MESSAGE(write_cluster_files(dir.file(""), ports, out) == 0, out);
    const std::string cluster_file = dir.file("cluster.json");
    const auto ring = cluster::load_ring(cluster_file);
    REQUIRE_MESSAGE(ring.has_value(), ring.error().message());
    REQUIRE(ring->servers.size() == 2);

    const auto daemon_args = [&](int i) {
      return std::vector<std::string>{"--listen",       "127.0.0.1:" + std::to_string(ports[1 + i]),
                                      "--cluster",      cluster_file,
                                      "--cluster-self", ring->servers[i].name};
    };
    std::vector<std::unique_ptr<daemon_process>> daemons;
    for (int i = 0; i < 2; ++i) {
      daemons.push_back(std::make_unique<daemon_process>(
          dir.file(""), dir.file("d" + std::to_string(i) + ".db"), daemon_args(i)));
      REQUIRE_MESSAGE(daemons.back()->port() == ports[1 + i], daemons.back()->log());
    }
    CHECK(daemons[0]->log().find("cluster: server " + ring->servers[0].name + " of 2: owns ") !=
          std::string::npos);
    CHECK(daemons[0]->log().find("cluster_address") == std::string::npos);
    haproxy_process proxy(haproxy, dir.file("haproxy.cfg"), dir.file("haproxy.log"));
    REQUIRE(proxy.pid() > 0);
    const auto up_by = std::chrono::steady_clock::now() + 10s;
    while (!accepts(ports[0]) && std::chrono::steady_clock::now() < up_by) {
      std::this_thread::sleep_for(20ms);
    }
    REQUIRE_MESSAGE(accepts(ports[0]), proxy.log());

    // Which daemon owns each swarm, by the one function; both own some.
    std::vector<std::size_t> owner(kSwarms);
    std::set<std::string> owned[2];
    for (int s = 0; s < kSwarms; ++s) {
      owner[s] = cluster::owner_of(*ring, swarm_id(s));
      owned[owner[s]].insert(swarm_id(s));
    }
    REQUIRE(!owned[0].empty());
    REQUIRE(!owned[1].empty());

    // Every worker connects through the proxy; 20 events each.
    std::vector<std::unique_ptr<daemon_client>> clients;
    for (int s = 0; s < kSwarms; ++s) {
      clients.push_back(std::make_unique<daemon_client>(options_for(ports[0], swarm_id(s))));
      test::send_cycling(*clients.back(), 20, kFps);
    }
    for (auto& c : clients) REQUIRE_MESSAGE(c->wait_acknowledged(20, 15s), c->stats().last_error);
    CHECK(swarms_on(ports[1]) == joined(owned[0]));
    CHECK(swarms_on(ports[2]) == joined(owned[1]));

    // Straight to the wrong daemon: refused with not_owner (1013, try again later), naming the
    // owner; by the URL before the hello, or by the hello when the URL names no swarm.
    const int foreign = static_cast<int>(owner[0] == 0 ? 1 : 0);  // the daemon not owning swarm-0
    {
      test::ws_client ws(ports[1 + foreign], "/ws?swarm=" + swarm_id(0));
      const auto e = ws.next_of("error", 5s);
      REQUIRE(e);
      CHECK((*e)["code"] == "not_owner");
      CHECK((*e)["message"].get<std::string>().find("belongs to " + ring->servers[owner[0]].name) !=
            std::string::npos);
      CHECK(ws.wait_closed(5s) == 1013);
    }
    {
      test::ws_client ws(ports[1 + foreign], "/ws");
      CHECK_FALSE(ws.hello(swarm_id(0), "intruder", "i1"));
      const auto errors = ws.received("error");
      REQUIRE(errors.size() == 1);
      CHECK(errors[0]["code"] == "not_owner");
      CHECK(ws.wait_closed(5s) == 1013);
    }
    {  // the SDK's client takes not_owner as retry: it backs off and tries again, never gives up
      client_options o = options_for(ports[1 + foreign], swarm_id(0));
      o.worker = "misrouted";
      daemon_client misrouted(o);
      test::send_cycling(misrouted, 3, kFps);
      // Refused again and again: the daemon's error count grows by at least three.
      const std::uint64_t before = errors_sent(ports[1 + foreign]);
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      while (errors_sent(ports[1 + foreign]) < before + 3 &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
      }
      CHECK(errors_sent(ports[1 + foreign]) >= before + 3);
      const auto st = misrouted.stats();
      CHECK(st.last_error.find("not_owner") != std::string::npos);
      CHECK_FALSE(st.fatal);
      CHECK(st.acknowledged == 0);
    }
    CHECK(swarms_on(ports[1 + foreign]) == joined(owned[foreign]));

    // What the proxy refuses itself: no swarm, a raw '?' or ';' (HAProxy would end the value
    // there, the daemon would not), a path that is not the workers'.
    std::string body;
    CHECK(test::try_upgrade(ports[0], "/ws", body) == 400);
    CHECK(test::try_upgrade(ports[0], "/ws?swarm=a;b", body) == 400);
    CHECK(body.find("percent-encode") != std::string::npos);
    CHECK(test::try_upgrade(ports[0], "/ws?swarm=a?b", body) == 400);
    CHECK(test::try_upgrade(ports[0], "/api/live?swarm=a", body) == 404);

    // SIGKILL d2 while every worker keeps sending: d1's swarms go on without an error or a
    // reconnect, d2's wait (nothing acknowledged, nothing counted on d1).
    daemons[1]->signal(SIGKILL);
    REQUIRE(daemons[1]->wait(5s) == 128 + SIGKILL);
    const auto d2_swarm = *owned[1].begin();
    CHECK(test::try_upgrade(ports[0], "/ws?swarm=" + d2_swarm, body) == 503);  // no failover
    for (int round = 0; round < 4; ++round) {
      for (auto& c : clients) test::send_cycling(*c, 5, kFps);
      std::this_thread::sleep_for(150ms);
      CHECK(swarms_on(ports[1]) == joined(owned[0]));
    }
    for (int s = 0; s < kSwarms; ++s) {
      if (owner[s] != 0) continue;
      CHECK_MESSAGE(clients[s]->wait_acknowledged(40, 10s), clients[s]->stats().last_error);
      CHECK(clients[s]->stats().connects == 1);
      CHECK(clients[s]->stats().last_error.empty());
    }
    for (int s = 0; s < kSwarms; ++s) {
      if (owner[s] == 1) CHECK(clients[s]->stats().acknowledged == 20);
    }
    CHECK(swarms_on(ports[1]) == joined(owned[0]));

    // The restart: d2's workers reconnect through HAProxy and resend; everything counted once.
    daemons[1] = std::make_unique<daemon_process>(dir.file(""), dir.file("d1.db"), daemon_args(1));
    REQUIRE_MESSAGE(daemons[1]->port() == ports[2], daemons[1]->log());
    for (auto& c : clients) test::send_cycling(*c, 10, kFps);
    for (auto& c : clients) REQUIRE_MESSAGE(c->wait_acknowledged(50, 20s), c->stats().last_error);
    for (int s = 0; s < kSwarms; ++s) {
      if (owner[s] == 1) CHECK(clients[s]->stats().connects >= 2);
    }
    CHECK(swarms_on(ports[1]) == joined(owned[0]));
    CHECK(swarms_on(ports[2]) == joined(owned[1]));
    for (int s = 0; s < kSwarms; ++s) {
      const std::string id = swarm_id(s);
      CHECK_MESSAGE(
          digest_over_http(ports[1 + owner[s]], id) == test::cycling_digest(id, 1, 50, kFps), id);
      CHECK_MESSAGE(digest_over_http(ports[2 - owner[s]], id) == "HTTP 404", id);
    }
  }

  TEST_CASE("the cluster flags: both or neither, a known server, a valid file") {
    test::temp_dir dir;
    const std::string file = dir.file("cluster.json");
    std::ofstream(file) << R"({"servers": [{"name": "d1", "address": "127.0.0.1:7071"},
                                            {"name": "d2", "address": "127.0.0.1:7072"}]})";
    std::string out;
    CHECK(test::run_loopguardd(dir.file(""), {"--cluster", file}, out, 10s) == 2);
    CHECK(out.find("cluster_file and cluster_self go together") != std::string::npos);
    CHECK(test::run_loopguardd(dir.file(""), {"--cluster", file, "--cluster-self", "d3"}, out,
                               10s) == 2);
    CHECK(out.find(file + ": cluster_self: no server is named \"d3\" (the servers: d1, d2)") !=
          std::string::npos);
    std::ofstream(dir.file("bad.json")) << R"({"servers": [{"name": "d1"}]})";
    CHECK(test::run_loopguardd(dir.file(""),
                               {"--cluster", dir.file("bad.json"), "--cluster-self", "d1"}, out,
                               10s) == 2);
    CHECK(out.find(dir.file("bad.json") +
                   ": servers[0].address: expected a string of at most 256 bytes, got nothing") !=
          std::string::npos);
    // The same from the environment and from a config file, as every setting.
    CHECK(test::run_loopguardd(
              dir.file(""), {"--print-config"}, out, 10s,
              {{"LOOPGUARD_CLUSTER_FILE", file}, {"LOOPGUARD_CLUSTER_SELF", "d2"}}) == 0);
    CHECK(out.find("\"cluster_file\": \"" + file + "\"") != std::string::npos);
    CHECK(out.find("\"cluster_self\": \"d2\"") != std::string::npos);
    const std::string config = dir.file("lg.json");
    std::ofstream(config) << R"({"cluster_file": ")" << file << R"(", "cluster_self": "d9"})";
    CHECK(test::run_loopguardd(dir.file(""), {"--config", config}, out, 10s) == 2);
    CHECK(out.find("no server is named \"d9\"") != std::string::npos);
    // A daemon listening elsewhere than its cluster entry says so (and serves).
    test::daemon_process d1(dir.file(""), dir.file("d1.db"),
                            {"--cluster", file, "--cluster-self", "d1"});
    REQUIRE_MESSAGE(d1.port() != 0, d1.log());
    CHECK(d1.log().find("the cluster file gives d1 the address 127.0.0.1:7071, but this daemon "
                        "listens on 127.0.0.1:0") != std::string::npos);
    // The map HAProxy routes by: one line per bucket.
    CHECK(test::run_loopguardd(dir.file(""), {"--cluster", file, "--print-haproxy-map"}, out,
                               10s) == 0);
    CHECK(std::count(out.begin(), out.end(), '\n') == 1024);
    CHECK(out.starts_with("0 d"));
  }

  TEST_CASE(
      "rebalance: adding a daemon, then removing one, moves exactly the swarms whose owner "
      "changed, with their counts" *
      doctest::timeout(90)) {
    test::temp_dir dir;
    const auto ports = free_ports(3);
    const std::vector<std::pair<std::string, unsigned short>> all = {
        {"d1", ports[0]}, {"d2", ports[1]}, {"d3", ports[2]}};
    const auto write = [&](const std::string& name, std::vector<std::size_t> which) {
      std::vector<std::pair<std::string, unsigned short>> servers;
      for (auto i : which) servers.push_back(all[i]);
      std::ofstream(dir.file(name)) << cluster_json(servers);
      const auto ring = cluster::load_ring(dir.file(name));
      REQUIRE_MESSAGE(ring.has_value(), ring.error().message());
      return *ring;
    };
    const auto two = write("two.json", {0, 1});
    const auto three = write("three.json", {0, 1, 2});
    const auto without_d2 = write("without-d2.json", {0, 2});
    // Runs the daemons of `ring` (on their ports, with their databases), then `f(port of owner)`.
    const auto with_cluster = [&](const std::string& file, const cluster::ring& ring, auto&& f) {
      std::vector<std::unique_ptr<daemon_process>> daemons;
      for (const auto& s : ring.servers) {
        daemons.push_back(std::make_unique<daemon_process>(
            dir.file(""), dir.file(s.name + ".db"),
            std::vector<std::string>{"--listen", s.address, "--cluster", dir.file(file),
                                     "--cluster-self", s.name}));
        REQUIRE_MESSAGE(daemons.back()->port() != 0, daemons.back()->log());
      }
      f(daemons);
      for (auto& d : daemons) {
        d->signal(SIGTERM);
        CHECK(d->wait(10s) == 0);
      }
    };
    const auto port_of = [&](const cluster::ring& ring, const std::string& swarm) {
      const auto& address = ring.servers[cluster::owner_of(ring, swarm)].address;
      return static_cast<unsigned short>(std::stoi(address.substr(address.rfind(':') + 1)));
    };
    std::vector<std::string> digests(kSwarms);
    with_cluster("two.json", two, [&](auto&) {
      std::vector<std::unique_ptr<daemon_client>> clients;
      for (int s = 0; s < kSwarms; ++s) {
        clients.push_back(
            std::make_unique<daemon_client>(options_for(port_of(two, swarm_id(s)), swarm_id(s))));
        test::send_cycling(*clients.back(), 1 + std::uint64_t(s % 5), kFps);
      }
      for (int s = 0; s < kSwarms; ++s) {
        REQUIRE(clients[s]->wait_acknowledged(1 + std::uint64_t(s % 5), 10s));
        digests[s] = digest_over_http(port_of(two, swarm_id(s)), swarm_id(s));
        CHECK(digests[s] == test::cycling_digest(swarm_id(s), 1, 1 + std::uint64_t(s % 5), kFps));
      }
    });
    // Each step: the swarms whose owner changes move, every digest stays, no swarm on two.
    const auto check_placement = [&](const std::string& file, const cluster::ring& ring) {
      with_cluster(file, ring, [&](auto& daemons) {
        std::set<std::string> owned[3];
        for (int s = 0; s < kSwarms; ++s)
          owned[cluster::owner_of(ring, swarm_id(s))].insert(swarm_id(s));
        for (std::size_t i = 0; i < ring.servers.size(); ++i) {
          CHECK_MESSAGE(swarms_on(daemons[i]->port()) == joined(owned[i]), ring.servers[i].name);
        }
        for (int s = 0; s < kSwarms; ++s) {
          CHECK_MESSAGE(digest_over_http(port_of(ring, swarm_id(s)), swarm_id(s)) == digests[s],
                        swarm_id(s));
        }
      });
    };
    const auto moved = [&](const cluster::ring& from, const cluster::ring& to) {
      int n = 0;
      for (int s = 0; s < kSwarms; ++s) {
        n += from.servers[cluster::owner_of(from, swarm_id(s))].name !=
                     to.servers[cluster::owner_of(to, swarm_id(s))].name
                 ? 1
                 : 0;
      }
      return n;
    };
    std::string out;
    REQUIRE(moved(two, three) > 0);
    REQUIRE_MESSAGE(rebalance(dir.file("two.json"), dir.file("three.json"), out) == 0, out);
    CHECK(out.find("moved " + std::to_string(moved(two, three)) + " swarms") != std::string::npos);
    check_placement("three.json", three);
    REQUIRE(moved(three, without_d2) > 0);
    REQUIRE_MESSAGE(rebalance(dir.file("three.json"), dir.file("without-d2.json"), out) == 0, out);
    CHECK(out.find("moved " + std::to_string(moved(three, without_d2)) + " swarms") !=
          std::string::npos);
    check_placement("without-d2.json", without_d2);
    // Nothing is left on the removed daemon; a second run finds nothing to move.
    REQUIRE_MESSAGE(rebalance(dir.file("three.json"), dir.file("without-d2.json"), out) == 0, out);
    CHECK(out.find("moved 0 swarms") != std::string::npos);
    // A running daemon's file is refused: nothing moves.
    daemon_process running(dir.file(""), dir.file("d1.db"));
    REQUIRE(running.port() != 0);
    CHECK(rebalance(dir.file("without-d2.json"), dir.file("two.json"), out) == 1);
    CHECK_MESSAGE(out.find("another process holds it") != std::string::npos, out);
  }
}
