// A full disk, for real: the database on a small tmpfs mounted in a private mount namespace
// (unshare -m), which only the daemon sees. Needs root (CAP_SYS_ADMIN) and fails, naming the
// cause, when the namespace or the mount is not permitted: there is no fake disk to fall back
// to. A holder process keeps the namespace (and the tmpfs) alive; every loopguardd enters it
// with nsenter, which execs loopguardd under its own PID. Killing the holder and the daemons by
// PID ends the namespace, and the tmpfs with it. ctest label: fulldisk.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../daemon/test_util.hpp"
#include "child_process.hpp"
#include "daemon_process.hpp"
#include "http_json.hpp"
#include "loopguard/hex.hpp"
#include "loopguard/protocol.hpp"
#include "state/shared_economics_state.hpp"
#include "ws_client.hpp"

using namespace loopguard;
using namespace std::chrono_literals;
using nlohmann::json;
using test::daemon_process;
using test::ws_client;

namespace {

constexpr const char* kUnshare = "/usr/bin/unshare";
constexpr const char* kNsenter = "/usr/bin/nsenter";

// A private mount namespace holding a tmpfs of `kib` KiB at `mountpoint`, kept alive by a
// sleeping holder process. ok() false: why() says what was refused.
class tmpfs_namespace {
 public:
  tmpfs_namespace(const std::string& dir, const std::string& mountpoint, unsigned kib)
      : dir_(dir), mountpoint_(mountpoint) {
    for (const char* tool : {kUnshare, kNsenter}) {
      if (!std::filesystem::exists(tool)) {
        why_ = std::string(tool) + " is missing (util-linux)";
        return;
      }
    }
    std::filesystem::create_directories(mountpoint_);
    const std::string ready = dir_ + "/namespace-ready";
    const std::string script = "mount -t tmpfs -o size=" + std::to_string(kib) + "k tmpfs '" +
                               mountpoint_ + "' && echo ok > '" + ready + "' && exec sleep 300";
    holder_ = test::spawn_child(kUnshare, {"-m", "--propagation", "private", "sh", "-c", script},
                                {log(), log(), false});
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::filesystem::exists(ready)) return;
      if (auto code = test::wait_child(holder_, 0ms)) {
        holder_ = -1;
        why_ = "unshare -m + mount -t tmpfs failed (exit " + std::to_string(*code) +
               "; the test needs root and mount namespaces): " + test::slurp(log());
        return;
      }
      std::this_thread::sleep_for(10ms);
    }
    why_ = "the tmpfs namespace was not ready within 10 s: " + test::slurp(log());
  }
  ~tmpfs_namespace() {
    if (holder_ > 0) test::finish_child(holder_, 0ms);
  }
  tmpfs_namespace(const tmpfs_namespace&) = delete;
  tmpfs_namespace& operator=(const tmpfs_namespace&) = delete;

  bool ok() const { return holder_ > 0 && why_.empty(); }
  const std::string& why() const { return why_; }
  // Runs a program inside the namespace: nsenter, then exec.
  std::vector<std::string> launcher() const {
    return {kNsenter, "-m", "-t", std::to_string(holder_), "--"};
  }
  // Resizes the tmpfs from inside the namespace; the exit code of mount.
  int resize(unsigned kib) const {
    auto args = launcher();
    args.erase(args.begin());
    args.insert(args.end(),
                {"mount", "-o", "remount,size=" + std::to_string(kib) + "k", mountpoint_});
    return test::finish_child(test::spawn_child(kNsenter, args, {log(), log(), true}), 10s);
  }
  // `df` of the tmpfs as seen inside the namespace, for messages.
  std::string df() const {
    auto args = launcher();
    args.erase(args.begin());
    const std::string out = dir_ + "/df.txt";
    args.insert(args.end(), {"df", "-k", mountpoint_});
    test::finish_child(test::spawn_child(kNsenter, args, {out, out, false}), 10s);
    return test::slurp(out);
  }
  std::string log() const { return dir_ + "/namespace.log"; }

 private:
  std::string dir_, mountpoint_, why_;
  pid_t holder_ = -1;
};

constexpr std::uint64_t kFps = 40, kBatch = 50;

// The n-th event of a worker: fingerprints cycle through kFps values with a fixed result each,
// so the final state does not depend on how the workers' events interleave. A long summary
// makes each log record large, so the disk fills quickly.
protocol::event nth_event(std::uint64_t seq) {
  auto e = test::wire_event(seq, 1 + seq % kFps, double(seq), 1000 + seq % kFps);
  e.summary += std::string(200, 'x');
  return e;
}

json batch(std::uint64_t from, std::uint64_t to) {
  protocol::events b;
  for (std::uint64_t s = from; s <= to; ++s) b.items.push_back(nth_event(s));
  return json::parse(protocol::serialize(b));
}

// What the daemon must hold after each worker w sent events 1..last[w] of `swarm`.
std::string expected_digest(const std::string& swarm, const std::vector<std::uint64_t>& last) {
  daemon::shared_economics_state s;
  daemon::swarm_event e;
  e.swarm = swarm;
  for (std::size_t w = 0; w < last.size(); ++w) {
    e.worker = test::worker_name(long(w));
    for (std::uint64_t seq = 1; seq <= last[w]; ++seq) {
      daemon::assign(e, nth_event(seq));
      s.apply(e);
    }
  }
  return to_hex(s.digest(swarm));
}

std::string get(unsigned short port, const std::string& target, int& status) {
  std::string body;
  status = test::http_get(port, target, body);
  return body;
}

// The value of an unlabelled metric line ("name value"), -1 when absent.
double metric(unsigned short port, const std::string& name) {
  int status = 0;
  std::istringstream in(get(port, "/metrics", status));
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(name + " ")) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

// Loads until the acks stop because checkpoints fail: every worker sends a batch a round and
// waits for its ack; a late ack while /readyz is still 200 is only a slow machine. False when
// the checkpoints never failed within 20 s. `sent`: the last seq sent by each worker.
bool fill_until_stalled(unsigned short port, std::vector<std::unique_ptr<ws_client>>& ws,
                        std::vector<std::uint64_t>& sent) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    for (std::size_t w = 0; w < ws.size(); ++w) {
      ws[w]->send(batch(sent[w] + 1, sent[w] + kBatch));
      sent[w] += kBatch;
    }
    for (std::size_t w = 0; w < ws.size(); ++w) {
      while (!ws[w]->wait_ack(sent[w], 500ms)) {
        int status = 0;
        get(port, "/readyz", status);
        if (status == 503) return true;
        if (std::chrono::steady_clock::now() > deadline) return false;
      }
    }
  }
  return false;
}

}  // namespace

TEST_SUITE("fulldisk") {
  TEST_CASE(
      "full disk: acks wait and readiness says why until space returns, then writing "
      "resumes by itself and nothing acknowledged is lost" *
      doctest::timeout(60)) {
    constexpr std::size_t kWorkers = 3;
    constexpr unsigned kSmallKib = 1024, kLargeKib = 64 * 1024;
    test::temp_dir dir;
    const std::string disk = dir.file("disk"), db = disk + "/lg.db";
    tmpfs_namespace ns(dir.file(""), disk, kSmallKib);
    REQUIRE_MESSAGE(ns.ok(), ns.why());

    daemon_process d(dir.file(""), db, {}, {.launcher = ns.launcher()});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    std::vector<std::unique_ptr<ws_client>> ws;
    for (std::size_t w = 0; w < kWorkers; ++w) {
      ws.push_back(std::make_unique<ws_client>(d.port()));
      REQUIRE(ws.back()->hello("disk", test::worker_name(long(w)), "inc") == 0u);
    }

    std::vector<std::uint64_t> sent(kWorkers, 0);
    REQUIRE_MESSAGE(fill_until_stalled(d.port(), ws, sent),
                    "the " << kSmallKib << " KiB tmpfs never filled within 20 s:\n"
                           << ns.df());
    MESSAGE("full after ", sent[0], " events a worker:\n", ns.df());
    CHECK_MESSAGE(ws[0]->last_ack() >= kBatch, "the disk was full before the first ack");

    // While full: acks stay where they are, even for new batches.
    std::vector<std::uint64_t> acked(kWorkers);
    for (std::size_t w = 0; w < kWorkers; ++w) {
      ws[w]->send(batch(sent[w] + 1, sent[w] + kBatch));
      sent[w] += kBatch;
    }
    std::this_thread::sleep_for(500ms);
    for (std::size_t w = 0; w < kWorkers; ++w) acked[w] = ws[w]->last_ack();
    std::this_thread::sleep_for(1s);
    for (std::size_t w = 0; w < kWorkers; ++w) {
      CHECK(ws[w]->last_ack() == acked[w]);
      CHECK(acked[w] < sent[w]);
    }
    int status = 0;
    const std::string ready = get(d.port(), "/readyz", status);
    CHECK(status == 503);
    CHECK_MESSAGE(ready.starts_with("not ready: checkpoints are failing: "), ready);
    CHECK_MESSAGE(ready.find("full") != std::string::npos, ready);
    CHECK(get(d.port(), "/healthz", status) == "ok\n");
    CHECK(status == 200);
    CHECK(metric(d.port(), "loopguard_durable") == 0);
    CHECK(metric(d.port(), "loopguard_checkpoint_failures_total") >= 1);
    CHECK_MESSAGE(d.log().find("checkpoint_failed") != std::string::npos, d.log());
    // The daemon still serves: the API, and a new worker of another swarm gets its welcome.
    get(d.port(), "/api/swarms", status);
    CHECK(status == 200);
    {
      ws_client other(d.port());
      CHECK(other.hello("elsewhere", "w0", "inc") == 0u);
    }
    CHECK(d.wait(0ms) == std::nullopt);  // still running

    // Space returns: the pending acks arrive without a restart, readiness recovers.
    REQUIRE_MESSAGE(ns.resize(kLargeKib) == 0, test::slurp(ns.log()));
    for (std::size_t w = 0; w < kWorkers; ++w) {
      CHECK_MESSAGE(ws[w]->wait_ack(sent[w], 10s), "worker ", w, " acked ", ws[w]->last_ack(),
                    " of ", sent[w], " after the disk grew\n", d.log());
    }
    std::string after;
    for (int i = 0; i < 100; ++i) {
      after = get(d.port(), "/readyz", status);
      if (status == 200) break;
      std::this_thread::sleep_for(50ms);
    }
    CHECK_MESSAGE(status == 200, after);
    CHECK(after == "ready\n");
    CHECK(metric(d.port(), "loopguard_durable") == 1);
    // Writing goes on.
    for (std::size_t w = 0; w < kWorkers; ++w) {
      ws[w]->send(batch(sent[w] + 1, sent[w] + kBatch));
      sent[w] += kBatch;
    }
    for (std::size_t w = 0; w < kWorkers; ++w) CHECK(ws[w]->wait_ack(sent[w], 10s));
    const std::string expected = expected_digest("disk", sent);
    CHECK(test::digest_over_http(d.port(), "disk") == expected);

    // kill -9, restart on the same tmpfs: every acknowledged event is there, once.
    ws.clear();
    d.signal(SIGKILL);
    CHECK(d.wait(5s) == 128 + SIGKILL);
    daemon_process again(dir.file(""), db, {}, {.launcher = ns.launcher()});
    REQUIRE_MESSAGE(again.port() != 0, again.log());
    CHECK(test::digest_over_http(again.port(), "disk") == expected);
    for (std::size_t w = 0; w < kWorkers; ++w) {
      ws_client c(again.port());
      CHECK(c.hello("disk", test::worker_name(long(w)), "inc") == sent[w]);
    }
  }
  TEST_CASE("full disk: kill -9 while checkpoints fail loses nothing acknowledged" *
            doctest::timeout(60)) {
    constexpr std::size_t kWorkers = 2;
    constexpr unsigned kSmallKib = 1024, kLargeKib = 64 * 1024;
    test::temp_dir dir;
    const std::string disk = dir.file("disk"), db = disk + "/lg.db";
    tmpfs_namespace ns(dir.file(""), disk, kSmallKib);
    REQUIRE_MESSAGE(ns.ok(), ns.why());
    std::vector<std::uint64_t> sent(kWorkers, 0), acked(kWorkers, 0);
    {
      daemon_process d(dir.file(""), db, {}, {.launcher = ns.launcher()});
      REQUIRE_MESSAGE(d.port() != 0, d.log());
      std::vector<std::unique_ptr<ws_client>> ws;
      for (std::size_t w = 0; w < kWorkers; ++w) {
        ws.push_back(std::make_unique<ws_client>(d.port()));
        REQUIRE(ws.back()->hello("disk", test::worker_name(long(w)), "inc") == 0u);
      }
      REQUIRE_MESSAGE(fill_until_stalled(d.port(), ws, sent), "the tmpfs never filled:\n"
                                                                  << ns.df());
      for (std::size_t w = 0; w < kWorkers; ++w) acked[w] = ws[w]->last_ack();
      d.signal(SIGKILL);
      CHECK(d.wait(5s) == 128 + SIGKILL);
    }
    // A restart on the still full disk is refused (SQLite cannot recover the WAL without
    // space) and leaves the file as it was; the restart after the disk grew restores it.
    {
      daemon_process d(dir.file(""), db, {}, {.launcher = ns.launcher()});
      CHECK_MESSAGE(d.port() == 0, d.log());
      CHECK_MESSAGE(d.log().find("open_failed: refusing " + db + ": ") != std::string::npos,
                    d.log());
      CHECK_MESSAGE(d.log().find("the file was not modified") != std::string::npos, d.log());
      CHECK_MESSAGE(d.log().find("the disk is full") != std::string::npos, d.log());
    }
    REQUIRE_MESSAGE(ns.resize(kLargeKib) == 0, test::slurp(ns.log()));
    daemon_process d(dir.file(""), db, {}, {.launcher = ns.launcher()});
    REQUIRE_MESSAGE(d.port() != 0, d.log());
    for (std::size_t w = 0; w < kWorkers; ++w) {
      ws_client c(d.port());
      const auto last = c.hello("disk", test::worker_name(long(w)), "inc");
      REQUIRE(last.has_value());
      MESSAGE("worker ", w, ": ", sent[w], " sent, ", acked[w], " acknowledged, ", *last,
              " restored");
      CHECK(*last >= acked[w]);
      CHECK(*last <= sent[w]);
      // Resend what was not restored, as a worker does.
      for (std::uint64_t s = *last + 1; s <= sent[w]; s += kBatch) {
        c.send(batch(s, std::min(s + kBatch - 1, sent[w])));
      }
      if (*last < sent[w]) CHECK(c.wait_ack(sent[w], 10s));
    }
    CHECK(test::digest_over_http(d.port(), "disk") == expected_digest("disk", sent));
  }
}
