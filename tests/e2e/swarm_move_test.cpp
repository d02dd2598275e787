// Moving a swarm between two real loopguardd's databases (docs/scaling.md, "Moving a swarm"):
// daemon A counts a swarm from an SDK worker, stops; the swarm is exported from A's file,
// imported into B's and removed from A's with the loopguardd commands; B then serves it with
// A's digest and sequence numbers, so the worker's resent, unacknowledged events count once and
// a full resend counts nothing; A no longer has it. Refusals leave every file as it was.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "../daemon/test_util.hpp"
#include "cycling_events.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/daemon_client.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using test::daemon_process;
using test::digest_over_http;
using json = nlohmann::json;

namespace {

constexpr std::uint64_t kMoveFps = 7;

// The swarms a daemon's API lists, sorted, space-separated.
std::string swarms_on(unsigned short port) {
  std::string body;
  if (test::http_get(port, "/api/swarms", body) != 200) return "HTTP error: " + body;
  std::set<std::string> names;
  const auto doc = json::parse(body);  // kept: a range-for over a temporary's member dangles
  for (const auto& s : doc.at("swarms")) names.insert(s.at("swarm").get<std::string>());
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ' ';
    out += n;
  }
  return out;
}

client_options worker(unsigned short port, const std::string& swarm) {
  client_options o;
  o.url = "ws://127.0.0.1:" + std::to_string(port);
  o.swarm = swarm;
  o.worker = test::worker_name(0);
  o.incarnation = "run-1";
  o.outbox = 1000;
  o.backoff_min = 20ms;
  o.backoff_max = 200ms;
  return o;
}

void stop(daemon_process& d) {
  d.signal(SIGTERM);
  REQUIRE(d.wait(10s) == 0);
}

int loopguardd(const test::temp_dir& dir, std::vector<std::string> args, std::string& out) {
  return test::run_loopguardd(dir.file(""), std::move(args), out, 30s);
}

}  // namespace

TEST_SUITE("swarm move") {
  TEST_CASE(
      "a swarm moved from a stopped daemon's file to another's keeps its counts, exactly "
      "once" *
      doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string a_db = dir.file("a.db"), b_db = dir.file("b.db");
    const std::string file = dir.file("moving.lgswarm");
    std::string out;

    // B has served a swarm of its own, and is stopped.
    {
      daemon_process b(dir.file(""), b_db);
      REQUIRE_MESSAGE(b.port() != 0, b.log());
      daemon_client native(worker(b.port(), "native"));
      test::send_cycling(native, 5, kMoveFps);
      REQUIRE(native.wait_acknowledged(5, 10s));
      stop(b);
    }

    // A counts "moving" (and "staying"); 30 events acknowledged.
    auto a = std::make_unique<daemon_process>(dir.file(""), a_db);
    REQUIRE_MESSAGE(a->port() != 0, a->log());
    const unsigned short a_port = a->port();
    daemon_client moving(worker(a_port, "moving"));
    {
      daemon_client staying(worker(a_port, "staying"));
      test::send_cycling(staying, 8, kMoveFps);
      REQUIRE(staying.wait_acknowledged(8, 10s));
    }
    test::send_cycling(moving, 30, kMoveFps);
    REQUIRE_MESSAGE(moving.wait_acknowledged(30, 10s), moving.stats().last_error);
    const std::string before = digest_over_http(a_port, "moving");
    CHECK(before == test::cycling_digest("moving", 1, 30, kMoveFps));

    // A running daemon locks its file: the export is refused, the file untouched.
    CHECK(loopguardd(dir, {"--db", a_db, "--export-swarm", "moving", "--out", file}, out) == 1);
    CHECK(out.find("refusing " + a_db + ": another process holds it") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(file));

    // A stops; the worker goes on: 10 more events wait unacknowledged in its outbox.
    stop(*a);
    a.reset();
    test::send_cycling(moving, 10, kMoveFps);
    CHECK(moving.stats().acknowledged == 30);

    // Export from A, import into B, remove from A.
    REQUIRE_MESSAGE(
        loopguardd(dir, {"--db", a_db, "--export-swarm", "moving", "--out", file}, out) == 0, out);
    CHECK(out.find("exported swarm \"moving\" (") != std::string::npos);
    CHECK(out.find("digest " + before) != std::string::npos);
    // Exporting again never overwrites the file.
    CHECK(loopguardd(dir, {"--db", a_db, "--export-swarm", "moving", "--out", file}, out) == 1);
    CHECK(out.find(file + ": already exists") != std::string::npos);
    REQUIRE_MESSAGE(loopguardd(dir, {"--db", b_db, "--import-swarm", file}, out) == 0, out);
    CHECK(out.find("imported swarm \"moving\"") != std::string::npos);
    // A second import is refused: B already counts it.
    CHECK(loopguardd(dir, {"--db", b_db, "--import-swarm", file}, out) == 1);
    CHECK(out.find(b_db + " already holds swarm \"moving\"") != std::string::npos);
    REQUIRE_MESSAGE(loopguardd(dir, {"--db", a_db, "--remove-exported", file}, out) == 0, out);
    CHECK(out.find("removed swarm \"moving\"") != std::string::npos);

    // B on its own port: A's digest, and the worker's sequence numbers.
    {
      daemon_process b(dir.file(""), b_db);
      REQUIRE_MESSAGE(b.port() != 0, b.log());
      CHECK(swarms_on(b.port()) == "moving native");
      CHECK(digest_over_http(b.port(), "moving") == before);
      // The same incarnation resending everything it ever sent counts nothing.
      test::ws_client ws(b.port(), "/ws?swarm=moving");
      const auto last = ws.hello("moving", test::worker_name(0), "run-1");
      REQUIRE(last.has_value());
      CHECK(*last == 30);
      protocol::events again;
      for (std::uint64_t s = 1; s <= 30; ++s)
        again.items.push_back(test::cycling_event(s, kMoveFps));
      ws.send(json::parse(protocol::serialize(again)));
      // A heartbeat (no events) is answered with the acknowledged point, after the batch before
      // it was applied: a resend of nothing new moves no ack by itself.
      ws.send(json::parse(protocol::serialize(protocol::events{})));
      CHECK(ws.wait_ack(30, 5s));
      CHECK(digest_over_http(b.port(), "moving") == before);
      stop(b);
    }

    // B where A was (the proxy's new route): the worker reconnects and resends its 10
    // unacknowledged events; each counts once.
    daemon_process b(dir.file(""), b_db, {"--listen", "127.0.0.1:" + std::to_string(a_port)});
    REQUIRE_MESSAGE(b.port() == a_port, b.log());
    REQUIRE_MESSAGE(moving.wait_acknowledged(40, 15s), moving.stats().last_error);
    CHECK(digest_over_http(a_port, "moving") == test::cycling_digest("moving", 1, 40, kMoveFps));
    CHECK(swarms_on(a_port) == "moving native");

    // A no longer has it: only "staying" is left, and a worker of "moving" would start over.
    daemon_process a2(dir.file(""), a_db);
    REQUIRE_MESSAGE(a2.port() != 0, a2.log());
    CHECK(swarms_on(a2.port()) == "staying");
    CHECK(digest_over_http(a2.port(), "moving") == "HTTP 404");
    test::ws_client ws(a2.port(), "/ws?swarm=moving");
    CHECK(ws.hello("moving", test::worker_name(0), "run-1") == std::optional<std::uint64_t>(0));
  }

  TEST_CASE("a damaged export file is refused by name and the target database is untouched" *
            doctest::timeout(60)) {
    test::temp_dir dir;
    const std::string a_db = dir.file("a.db"), b_db = dir.file("b.db");
    const std::string file = dir.file("s.lgswarm");
    std::string out;
    {
      daemon_process a(dir.file(""), a_db);
      REQUIRE_MESSAGE(a.port() != 0, a.log());
      daemon_client c(worker(a.port(), "s"));
      test::send_cycling(c, 12, kMoveFps);
      REQUIRE(c.wait_acknowledged(12, 10s));
      stop(a);
    }
    REQUIRE_MESSAGE(loopguardd(dir, {"--db", a_db, "--export-swarm", "s", "--out", file}, out) == 0,
                    out);
    const std::string good = test::read_bytes(file);
    {
      daemon_process b(dir.file(""), b_db);  // B exists, with a swarm of its own
      REQUIRE_MESSAGE(b.port() != 0, b.log());
      daemon_client c(worker(b.port(), "other"));
      test::send_cycling(c, 3, kMoveFps);
      REQUIRE(c.wait_acknowledged(3, 10s));
      stop(b);
    }
    const std::string b_before = test::read_bytes(b_db);
    const auto try_import = [&](const std::string& bytes) {
      const std::string bad = dir.file("bad.lgswarm");
      std::filesystem::remove(bad);
      std::ofstream(bad, std::ios::binary) << bytes;
      const int code = loopguardd(dir, {"--db", b_db, "--import-swarm", bad}, out);
      CHECK(code == 1);
      CHECK(out.find("loopguardd: " + bad + ": ") != std::string::npos);
      CHECK(test::read_bytes(b_db) == b_before);
      return out;
    };
    CHECK(try_import(good.substr(0, good.size() / 2)).find("truncated") != std::string::npos);
    std::string flipped = good;
    flipped[good.size() - 40] ^= 0x01;
    CHECK(try_import(flipped).find("checksum mismatch") != std::string::npos);
    CHECK(try_import("").find("not a loopguard swarm export") != std::string::npos);
    CHECK(try_import(std::string(100, '\0')).find("not a loopguard swarm export") !=
          std::string::npos);
    // Missing files and usage errors.
    CHECK(loopguardd(dir, {"--db", b_db, "--import-swarm", dir.file("none")}, out) == 1);
    CHECK(out.find(dir.file("none") + ": cannot read it") != std::string::npos);
    CHECK(loopguardd(dir,
                     {"--db", dir.file("none.db"), "--export-swarm", "s", "--out", dir.file("x")},
                     out) == 1);
    CHECK(out.find(dir.file("none.db") + ": no such database file") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("none.db")));
    CHECK(loopguardd(dir, {"--db", a_db, "--export-swarm", "nobody", "--out", dir.file("x")},
                     out) == 1);
    CHECK(out.find(a_db + " holds no swarm \"nobody\"") != std::string::npos);
    CHECK(loopguardd(dir, {"--db", a_db, "--export-swarm", "s"}, out) == 2);
    CHECK(out.find("--export-swarm needs --out FILE") != std::string::npos);
    CHECK(loopguardd(dir, {"--db", a_db, "--import-swarm", file, "--remove-exported", file}, out) ==
          2);
    // The good file still imports.
    REQUIRE_MESSAGE(loopguardd(dir, {"--db", b_db, "--import-swarm", file}, out) == 0, out);
  }
}
