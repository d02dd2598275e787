#include "server/move_commands.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cluster/cluster_ring.hpp"
#include "loopguard/hex.hpp"
#include "loopguard/utf8.hpp"
#include "server/daemon_server.hpp"
#include "service/swarm_move.hpp"
#include "store/sqlite_checkpoint_store.hpp"

namespace loopguard::daemon {
namespace {

constexpr int kRefused = 1;
constexpr int kUsage = 2;

int fail(const status& s, int code = kRefused) {
  std::fprintf(stderr, "loopguardd: %s\n", utf8::repair(s.message()).c_str());
  return code;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

swarm_service offline_service(const daemon_config& c) {
  return swarm_service(c.rules, state_options_of(c), offline_clock);
}

// The database, locked for this process alone (open() takes the file's exclusive lock: a
// daemon that has it open, even idle, makes it refuse).
result<std::unique_ptr<sqlite_checkpoint_store>> open_locked(const daemon_config& c) {
  return sqlite_checkpoint_store::open(c.db, {c.quick_check});
}

// The database a command reads: it must exist (opening would create an empty one).
result<std::unique_ptr<sqlite_checkpoint_store>> open_existing(const daemon_config& c) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(c.db, ec)) {
    return status::error(c.db + ": no such database file (--db)");
  }
  return open_locked(c);
}

std::string describe(const swarm_export& e) {
  return "swarm \"" + e.swarm.swarm + "\" (" + std::to_string(e.fingerprints.size()) +
         " fingerprints, " + std::to_string(e.workers.size()) + " workers, " +
         std::to_string(e.sequences.size()) + " incarnations, digest " + to_hex(e.digest) +
         (e.swarm.expired != 0 ? ", a tombstone" : "") + ")";
}

status write_export(const daemon_config& c, const swarm_export& e, const std::string& out) {
  return write_swarm_export(out, encode_swarm_export(e, {c.db, utc_now()}));
}

int export_one(const daemon_config& c, const move_command& m) {
  if (m.out.empty()) return fail(status::error("--export-swarm needs --out FILE"), kUsage);
  auto store = open_existing(c);
  if (!store) return fail(store.error());
  auto service = offline_service(c);
  auto e = export_swarm(**store, service, m.export_swarm, c.db);
  if (!e) return fail(e.error());
  if (auto s = write_export(c, *e, m.out); !s.ok()) return fail(s);
  std::printf("exported %s from %s to %s\n", utf8::repair(describe(*e)).c_str(), c.db.c_str(),
              m.out.c_str());
  return 0;
}

int import_one(const daemon_config& c, const move_command& m) {
  auto e = read_swarm_export(m.import_file);  // checked whole before the database is opened
  if (!e) return fail(e.error());
  auto store = open_locked(c);
  if (!store) return fail(store.error());
  auto service = offline_service(c);
  if (auto s = import_swarm(**store, service, *e, c.db); !s.ok()) return fail(s);
  std::printf("imported %s into %s\n", utf8::repair(describe(*e)).c_str(), c.db.c_str());
  return 0;
}

int remove_one(const daemon_config& c, const move_command& m) {
  auto e = read_swarm_export(m.remove_file);
  if (!e) return fail(e.error());
  auto store = open_existing(c);
  if (!store) return fail(store.error());
  auto service = offline_service(c);
  if (auto s = remove_swarm(**store, service, *e, c.db); !s.ok()) return fail(s);
  std::printf("removed %s from %s\n", utf8::repair(describe(*e)).c_str(), c.db.c_str());
  return 0;
}

// Every swarm of --db that the ring of --cluster gives another server than --cluster-self (which
// may be absent from it: a server being removed owns nothing), each to DIR/OWNER/N.lgswarm.
int export_moved(const daemon_config& c, const move_command& m) {
  if (c.cluster_file.empty() || c.cluster_self.empty()) {
    return fail(status::error("--export-moved needs --cluster NEW_FILE and --cluster-self NAME "
                              "(the server whose --db this is)"),
                kUsage);
  }
  const auto ring = cluster::load_ring(c.cluster_file);
  if (!ring) return fail(ring.error(), kUsage);
  auto store = open_existing(c);
  if (!store) return fail(store.error());
  auto service = offline_service(c);
  if (auto r = service.restore_from(**store); !r) {
    return fail(status::error("refusing " + c.db + ": " + r.error().message() +
                              "; the file was not modified"));
  }
  std::size_t n = 0;
  for (const auto& name : swarm_names(service)) {
    const auto& owner = ring->servers[cluster::owner_of(*ring, name)].name;
    if (owner == c.cluster_self) continue;
    const auto e = service.export_swarm(name);
    const std::string dir = m.export_moved + "/" + owner;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail(status::error(dir + ": cannot create it (" + ec.message() + ")"));
    const std::string file = dir + "/" + c.cluster_self + "-" + std::to_string(++n) + ".lgswarm";
    if (auto s = write_export(c, *e, file); !s.ok()) return fail(s);
    std::printf("exported %s from %s to %s (owner %s)\n", utf8::repair(describe(*e)).c_str(),
                c.db.c_str(), file.c_str(), owner.c_str());
  }
  std::printf("%zu swarms of %s belong to other servers of %s\n", n, c.db.c_str(),
              c.cluster_file.c_str());
  return 0;
}

}  // namespace

int run_move_command(const daemon_config& c, const move_command& m) {
  const int given = int{!m.export_swarm.empty()} + int{!m.import_file.empty()} +
                    int{!m.remove_file.empty()} + int{!m.export_moved.empty()};
  if (given != 1) {
    return fail(status::error("give one of --export-swarm, --import-swarm, --remove-exported and "
                              "--export-moved"),
                kUsage);
  }
  if (!m.out.empty() && m.export_swarm.empty()) {
    return fail(status::error("--out goes with --export-swarm"), kUsage);
  }
  if (c.db == ":memory:") return fail(status::error("--db :memory: holds no swarm"), kUsage);
  try {
    if (!m.export_swarm.empty()) return export_one(c, m);
    if (!m.import_file.empty()) return import_one(c, m);
    if (!m.remove_file.empty()) return remove_one(c, m);
    return export_moved(c, m);
  } catch (const std::exception& e) {
    return fail(status::error(c.db + ": " + e.what()));
  }
}

}  // namespace loopguard::daemon
