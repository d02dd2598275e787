// Moving one swarm between databases (docs/scaling.md, "Moving a swarm"; the file format in
// docs/storage.md, "Swarm export files"): export, import and removal on real SQLite files,
// through the daemon's own restore path, with log records not yet compacted; every refusal
// leaves the target as it was; a damaged export file is refused, never trusted.
#include <doctest/doctest.h>
#include <xxhash.h>

#include <filesystem>

#include "loopguard/hex.hpp"
#include "service/swarm_move.hpp"
#include "service/swarm_service.hpp"
#include "store/sqlite_checkpoint_store.hpp"
#include "store/swarm_export.hpp"
#include "store_util.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::daemon;
using loopguard::test::open_ok;
using loopguard::test::wire_event;

namespace {

std::vector<protocol::event> paid_events(std::uint64_t first, int n, double t,
                                         std::uint64_t tokens) {
  std::vector<protocol::event> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(wire_event(first + std::uint64_t(i), 1 + std::uint64_t(i % 4), t + i));
    out.back().spent = {tokens, 0.5};
  }
  return out;
}

swarm_service offline() {
  return swarm_service({}, {}, offline_clock);
}

std::uint64_t digest(const swarm_service& s, const std::string& swarm) {
  return s.read([&](const shared_economics_state& st) { return st.digest(swarm); });
}

// What a file restores to: each swarm's digest and every sequence row.
struct restored {
  std::map<std::string, std::uint64_t> digests;
  std::vector<sequence_row> sequences;
  friend bool operator==(const restored&, const restored&) = default;
};
restored restore_file(const std::string& path) {
  auto store = open_ok(path);
  swarm_service s = offline();
  const auto r = s.restore_from(*store);
  REQUIRE_MESSAGE(r.has_value(), r.error().message());
  restored out;
  for (const auto& name : swarm_names(s)) out.digests[name] = digest(s, name);
  out.sequences = s.sequences();
  return out;
}

// A daemon's database after two swarms' workers sent events: compacted rows, then log records
// (as after a crash: no final compaction), and an expired incarnation of "moved".
struct source_db {
  swarm_service live{{}, {}, [this] { return now; }};
  double now = 1'000'000;
  worker_identity w0{"moved", "w0", "i0"}, w1{"moved", "w1", "i1"}, other{"stays", "w0", "i0"},
      old{"moved", "w2", "gone"};
  void fill(checkpoint_store& store) {
    REQUIRE(live.ingest(w0, paid_events(1, 12, 0, 10)).error.ok());
    REQUIRE(live.ingest(old, paid_events(1, 2, 1, 10)).error.ok());
    REQUIRE(live.ingest(other, paid_events(1, 5, 0, 3)).error.ok());
    REQUIRE(write_checkpoint(store, live.take_checkpoint(true)).ok());
    now += 8 * 86400;  // `old` idle past its 7 days
    REQUIRE(live.attach(w0).ok());
    REQUIRE(live.attach(w1).ok());
    REQUIRE(live.attach(other).ok());
    REQUIRE(live.sweep({}).incarnations == 1);
    REQUIRE(live.ingest(w0, paid_events(13, 6, 20, 10)).error.ok());
    REQUIRE(live.ingest(w1, paid_events(1, 9, 22, 10)).error.ok());
    REQUIRE(write_checkpoint(store, live.take_checkpoint()).ok());  // a log record
    REQUIRE(live.ingest(other, paid_events(6, 2, 9, 3)).error.ok());
    REQUIRE(write_checkpoint(store, live.take_checkpoint()).ok());
  }
};

// Two exports hold the same state (every row, byte for byte) and the same digest.
bool same_export(const swarm_export& a, const swarm_export& b) {
  return encode_swarm_payload(a) == encode_swarm_payload(b) && a.digest == b.digest;
}

}  // namespace

TEST_SUITE("swarm move") {
  TEST_CASE("export, import and removal move a swarm whole, its log records folded in") {
    test::temp_dir dir;
    const std::string a = dir.file("a.db"), b = dir.file("b.db");
    source_db src;
    {
      auto store = open_ok(a);
      src.fill(*store);
    }
    // B already serves another swarm, with a log record pending.
    swarm_service b_live;
    {
      auto store = open_ok(b);
      REQUIRE(b_live.ingest({"native", "w0", "x"}, paid_events(1, 4, 0, 1)).error.ok());
      REQUIRE(write_checkpoint(*store, b_live.take_checkpoint()).ok());
    }
    const auto before_a = restore_file(a);
    const auto before_b = restore_file(b);

    // Export: everything "moved" holds, through the daemon's restore (rows + log replayed).
    swarm_export e;
    {
      auto store = open_ok(a);
      swarm_service s = offline();
      auto got = export_swarm(*store, s, "moved", a);
      REQUIRE_MESSAGE(got.has_value(), got.error().message());
      e = std::move(*got);
    }
    CHECK(e.digest == digest(src.live, "moved"));
    CHECK(e.workers.size() == 3);
    REQUIRE(e.sequences.size() == 2);  // w0 and w1; w2's expired
    CHECK(e.sequences[0].seq == 18);
    CHECK(e.sequences[1].seq == 9);
    CHECK(e.sequences[0].seen == src.now);
    REQUIRE(e.expired.size() == 1);
    CHECK(e.expired[0].id == src.old);
    CHECK(e.swarm.spent.tokens == 290);
    CHECK(restore_file(a) == before_a);  // exporting wrote nothing

    // The file round-trips exactly.
    const std::string file = encode_swarm_export(e, {a, "2026-11-26T00:00:00Z"});
    const auto decoded = decode_swarm_export(file);
    REQUIRE_MESSAGE(decoded.has_value(), decoded.error().message());
    CHECK(same_export(*decoded, e));

    // Import into B: one transaction, B's own swarm and log untouched.
    {
      auto store = open_ok(b);
      swarm_service s = offline();
      const auto st = import_swarm(*store, s, *decoded, b);
      REQUIRE_MESSAGE(st.ok(), st.message());
    }
    const auto after_b = restore_file(b);
    CHECK(after_b.digests.at("native") == before_b.digests.at("native"));
    CHECK(after_b.digests.at("moved") == digest(src.live, "moved"));
    CHECK(after_b.sequences.size() == before_b.sequences.size() + 2);
    {
      // The moved incarnations resend: nothing counts twice, the next event counts once.
      auto store = open_ok(b);
      swarm_service s;
      REQUIRE(s.restore_from(*store).has_value());
      CHECK(s.attach(src.old).code() == protocol::codes::incarnation_expired);
      const auto again = s.ingest(src.w0, paid_events(1, 18, 0, 10));
      CHECK(again.duplicates == 18);
      CHECK(again.applied == 0);
      CHECK(digest(s, "moved") == e.digest);
      const auto next = s.ingest(src.w1, paid_events(10, 1, 40, 10));
      CHECK(next.applied == 1);
      CHECK(next.error.ok());
    }

    // A second import is refused; B unchanged.
    {
      auto store = open_ok(b);
      swarm_service s = offline();
      const auto st = import_swarm(*store, s, *decoded, b);
      CHECK(st.message().find(b + " already holds swarm \"moved\"") != std::string::npos);
      CHECK(st.message().find("nothing was written") != std::string::npos);
    }
    CHECK(restore_file(b) == after_b);

    // Removal from A: only "moved" goes, everything of it.
    {
      auto store = open_ok(a);
      swarm_service s = offline();
      const auto st = remove_swarm(*store, s, e, a);
      REQUIRE_MESSAGE(st.ok(), st.message());
    }
    const auto after_a = restore_file(a);
    CHECK(after_a.digests.size() == 1);
    CHECK(after_a.digests.at("stays") == before_a.digests.at("stays"));
    for (const auto& r : after_a.sequences) CHECK(r.id.swarm == "stays");
    {
      auto store = open_ok(a);
      swarm_service s;
      REQUIRE(s.restore_from(*store).has_value());
      CHECK(s.attach(src.old).ok());  // its expired record went with it
      CHECK(s.export_swarm("moved") == std::nullopt);
    }
    // Removing again is refused.
    {
      auto store = open_ok(a);
      swarm_service s = offline();
      CHECK(remove_swarm(*store, s, e, a).message().find("holds no swarm \"moved\"") !=
            std::string::npos);
    }
  }

  TEST_CASE("removal is refused when the source changed since the export") {
    test::temp_dir dir;
    const std::string a = dir.file("a.db");
    source_db src;
    swarm_export e;
    {
      auto store = open_ok(a);
      src.fill(*store);
      swarm_service s = offline();
      e = *export_swarm(*store, s, "moved", a);
    }
    {
      auto store = open_ok(a);  // the daemon served one more event after the export
      REQUIRE(src.live.ingest(src.w1, paid_events(10, 1, 50, 1)).error.ok());
      REQUIRE(write_checkpoint(*store, src.live.take_checkpoint()).ok());
    }
    const auto before = restore_file(a);
    {
      auto store = open_ok(a);
      swarm_service s = offline();
      const auto st = remove_swarm(*store, s, e, a);
      CHECK(st.message().find("in another state than the export") != std::string::npos);
    }
    CHECK(restore_file(a) == before);
  }

  TEST_CASE("an empty swarm row in the target is replaced, a tombstone moves as one") {
    test::temp_dir dir;
    const std::string a = dir.file("a.db"), b = dir.file("b.db");
    double now = 5e6;
    swarm_service live({}, {}, [&] { return now; });
    {
      auto store = open_ok(a);
      REQUIRE(live.ingest({"t", "w0", "i"}, paid_events(1, 3, 0, 7)).error.ok());
      now += 2;
      REQUIRE(live.sweep({1, 1, 0}).swarms == 1);  // idle for 2 s: a tombstone
      REQUIRE(write_checkpoint(*store, live.take_checkpoint()).ok());
    }
    {
      auto store = open_ok(b);  // a swarm row of "t" with nothing counted
      checkpoint c;
      c.compact = true;
      c.state.swarms.push_back({"t", 0, {}, {}, {}, 0});
      REQUIRE(write_checkpoint(*store, c).ok());
    }
    auto store_a = open_ok(a);
    swarm_service sa = offline();
    const auto e = export_swarm(*store_a, sa, "t", a);
    REQUIRE(e.has_value());
    CHECK(e->swarm.expired == now);
    CHECK(e->swarm.spent.tokens == 21);
    CHECK(e->fingerprints.empty());
    {
      auto store = open_ok(b);
      swarm_service s = offline();
      const auto st = import_swarm(*store, s, *e, b);
      REQUIRE_MESSAGE(st.ok(), st.message());
    }
    auto store = open_ok(b);
    swarm_service s = offline();
    REQUIRE(s.restore_from(*store).has_value());
    const auto back = s.export_swarm("t");
    REQUIRE(back.has_value());
    CHECK(encode_swarm_payload(*back) == encode_swarm_payload(*e));
  }

  TEST_CASE("a damaged export file is refused with what is wrong, never trusted") {
    source_db src;
    auto store = open_ok(":memory:");
    src.fill(*store);
    swarm_service s = offline();
    const auto e = export_swarm(*store, s, "moved", "mem");
    REQUIRE(e.has_value());
    const std::string good = encode_swarm_export(*e, {"a.db", "2026-11-26T00:00:00Z"});
    REQUIRE(decode_swarm_export(good).has_value());

    // Every truncation, and a flipped bit at every byte: refused, never a crash.
    for (std::size_t n = 0; n < good.size(); ++n) {
      const auto r = decode_swarm_export(std::string_view(good).substr(0, n));
      REQUIRE_FALSE(r.has_value());
      CHECK_FALSE(r.error().message().empty());
    }
    for (std::size_t i = 0; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x10);
      REQUIRE_FALSE(decode_swarm_export(bad).has_value());
    }
    const auto why = [](const std::string& bytes) {
      const auto r = decode_swarm_export(bytes);
      return r ? std::string("accepted") : r.error().message();
    };
    CHECK(why("hello") ==
          "not a loopguard swarm export (it does not start with "
          "\"LOOPGUARD-SWARM-EXPORT \")");
    std::string v3 = good;
    REQUIRE(good.find(" 2\n") != std::string::npos);
    v3.replace(good.find(" 2\n"), 3, " 3\n");
    CHECK(why(v3).find("format version \"3\", which this build does not read (it reads 1 to 2)") !=
          std::string::npos);
    // Version 1 (fixed-width blobs, which the blob decoder tells apart) is still read: the
    // same file with its first line and checksum line as version 1 wrote them.
    std::string v1 = good.substr(0, good.rfind("xxh3 "));
    v1.replace(good.find(" 2\n"), 3, " 1\n");
    char sum[17];
    std::snprintf(sum, sizeof sum, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(v1.data(), v1.size())));
    v1 += std::string("xxh3 ") + sum + "\n";
    CHECK(why(v1) == "accepted");
    CHECK(why(good.substr(0, good.size() - 30)).starts_with("truncated: the header announces"));
    CHECK(why(good + "x").find("bytes after the checksum line") != std::string::npos);
    std::string flipped = good;
    flipped[good.find('\n', good.find('\n') + 1) + 5] ^= 1;  // in the payload
    CHECK(why(flipped).starts_with("checksum mismatch"));

    // With a valid checksum (and header), what the rows say is still checked before anything is
    // restored: encode_swarm_export writes `x` with the digest it carries, the original one.
    const auto with_payload = [](const swarm_export& x) { return encode_swarm_export(x, {}); };
    swarm_export x = *e;
    REQUIRE(!x.fingerprints.empty());
    x.fingerprints[0].stats.window.push_back({1.0, 99, true});  // a worker that does not exist
    CHECK(why(with_payload(x)).find("worker id 99 is out of range (3 workers)") !=
          std::string::npos);
    x = *e;
    x.workers[1].name = "\xff";
    CHECK(why(with_payload(x)).find("worker 1's name is not valid") != std::string::npos);
    x = *e;
    x.fingerprints[0].stats.calls += 1;  // the rows no longer give the header's digest
    CHECK(why(with_payload(x)).find("the rows' digest is") != std::string::npos);
    x = *e;
    x.swarm.latest_t = std::numeric_limits<double>::infinity();
    CHECK(why(with_payload(x)).find("not finite") != std::string::npos);
  }

  TEST_CASE("the export file: written whole, never over an existing file, read errors name it") {
    test::temp_dir dir;
    const std::string path = dir.file("s.lgswarm");
    source_db src;
    auto store = open_ok(":memory:");
    src.fill(*store);
    swarm_service s = offline();
    const auto e = export_swarm(*store, s, "moved", "mem");
    REQUIRE(e.has_value());
    const std::string bytes = encode_swarm_export(*e, {"mem", "now"});
    REQUIRE(write_swarm_export(path, bytes).ok());
    CHECK(test::read_bytes(path) == bytes);
    CHECK(write_swarm_export(path, bytes).message() ==
          path + ": already exists (a swarm export is never overwritten)");
    const auto back = read_swarm_export(path);
    REQUIRE(back.has_value());
    CHECK(same_export(*back, *e));
    std::filesystem::resize_file(path, bytes.size() / 2);
    const auto cut = read_swarm_export(path);
    REQUIRE_FALSE(cut.has_value());
    CHECK(cut.error().message().starts_with(path + ": truncated"));
    CHECK(read_swarm_export(dir.file("none"))
              .error()
              .message()
              .starts_with(dir.file("none") + ": cannot read it"));
  }
}
