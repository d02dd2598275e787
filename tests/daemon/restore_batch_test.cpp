// A restore's batches (state/restore_batch.hpp): rows called once travel as their fields and
// label bytes, others as their stats; the restore gives back exactly the rows added, repairs
// what is not UTF-8 on either path, and lets a row given twice be the later one.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "state/restore_batch.hpp"
#include "state/shared_economics_state.hpp"

using namespace loopguard;
using namespace loopguard::daemon;

namespace {

constexpr const char* kFffd = "\xef\xbf\xbd";

fingerprint_row once_row(const std::string& swarm, std::uint64_t fp, double t) {
  fingerprint_row r;
  r.swarm = swarm;
  r.key = {fingerprint_kind::exact, fp};
  r.stats.tool = "read_file";
  r.stats.summary = "path=src/module_" + std::to_string(fp) + ".py";
  r.stats.calls = 1;
  r.stats.first_seen = r.stats.last_seen = t;
  r.stats.workers.push_back(static_cast<std::uint32_t>(fp % 3));
  if (fp % 2 == 0) r.stats.results.push_back(fp * 7);
  if (fp % 4 != 3) r.stats.window.push_back({t, r.stats.workers[0], false});
  return r;
}

fingerprint_row twice_row(const std::string& swarm, std::uint64_t fp, double t) {
  fingerprint_row r = once_row(swarm, fp, t);
  r.key.kind = fingerprint_kind::structural;
  r.stats.calls = 2;
  r.stats.counted = 1;
  r.stats.last_seen = t + 1;
  r.stats.workers = {0, 2};
  r.stats.window = {};
  r.stats.window.push_back({t, 0, false});
  r.stats.window.push_back({t + 1, 2, true});
  return r;
}

bool by_swarm_and_key(const fingerprint_row& a, const fingerprint_row& b) {
  return std::tie(a.swarm, a.key) < std::tie(b.swarm, b.key);
}

// The state's rows, in (swarm, key) order.
std::vector<fingerprint_row> rows_of(const shared_economics_state& s) {
  auto rows = s.snapshot().fingerprints;
  std::sort(rows.begin(), rows.end(), by_swarm_and_key);
  return rows;
}

// `got` from rows_of(), `want` in any order.
void check_same(const std::vector<fingerprint_row>& got, std::vector<fingerprint_row> want) {
  std::sort(want.begin(), want.end(), by_swarm_and_key);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].swarm == want[i].swarm);
    CHECK(got[i].key == want[i].key);
    CHECK(got[i].stats == want[i].stats);
  }
}

// Restores `rows` through batches of `per_batch` rows into a fresh state.
std::size_t restore_in_batches(shared_economics_state& s, std::vector<fingerprint_row> rows,
                               std::size_t per_batch) {
  s.restore_begin();
  restore_batch batch;
  std::size_t repaired = 0;
  const auto flush = [&] {
    s.restore_fingerprints(batch);
    repaired += batch.repaired();
    batch.clear();
  };
  for (auto& r : rows) {
    batch.add(r);
    if (batch.size() == per_batch) flush();
  }
  flush();
  return repaired;
}

}  // namespace

TEST_SUITE("restore batch") {
  TEST_CASE("rows of both forms, in runs of several swarms, come back exactly") {
    std::vector<fingerprint_row> rows;
    // Runs: s1, s2, s1 again (a swarm may come back after another), each mixing both forms.
    for (std::uint64_t i = 1; i <= 40; ++i) rows.push_back(once_row("s1", i, 10.0 + i));
    for (std::uint64_t i = 1; i <= 25; ++i) {
      rows.push_back(i % 5 == 0 ? twice_row("s2", i, 20.0 + i) : once_row("s2", i, 20.0 + i));
    }
    for (std::uint64_t i = 41; i <= 60; ++i) {
      rows.push_back(i % 3 == 0 ? twice_row("s1", i, 30.0 + i) : once_row("s1", i, 30.0 + i));
    }
    rows.back().stats.tool.clear();  // no label block at all
    rows.back().stats.summary.clear();
    for (std::size_t per_batch : {1u, 7u, 64u, 1000u}) {
      CAPTURE(per_batch);
      shared_economics_state s;
      CHECK(restore_in_batches(s, rows, per_batch) == 0);
      check_same(rows_of(s), rows);
    }
  }

  TEST_CASE("names and labels that are not UTF-8 are repaired on both paths, and counted") {
    fingerprint_row once = once_row("bad\xff", 1, 5);
    once.stats.tool = "t\xfe";
    once.stats.summary = "\xc3";
    fingerprint_row twice = twice_row("bad\xff", 2, 6);
    twice.stats.tool = "\xff\xff";
    fingerprint_row fine = once_row("good", 3, 7);
    shared_economics_state s;
    // Replacements: one in the swarm's name of each of the two rows, one in each of the small
    // row's strings, two in the full row's tool; the same whatever the batches.
    CHECK(restore_in_batches(s, {once, twice, fine}, 100) == 6);
    shared_economics_state one_by_one;
    CHECK(restore_in_batches(one_by_one, {once, twice, fine}, 1) == 6);
    const auto rows = rows_of(s);
    REQUIRE(rows.size() == 3);
    const std::string bad = std::string("bad") + kFffd;
    CHECK(rows[0].swarm == bad);
    CHECK(rows[0].stats.tool == std::string("t") + kFffd);
    CHECK(rows[0].stats.summary == kFffd);
    CHECK(rows[1].swarm == bad);
    CHECK(rows[1].stats.tool == std::string(kFffd) + kFffd);
    CHECK(rows[2].swarm == "good");
    CHECK(rows[2].stats.tool == "read_file");
  }

  TEST_CASE("a row given twice: the later one wins, whichever the forms") {
    const fingerprint_row small_a = once_row("s", 9, 1);
    fingerprint_row small_b = once_row("s", 9, 2);
    small_b.stats.tool = "other_tool";
    fingerprint_row full = twice_row("s", 9, 3);
    full.key = small_a.key;
    fingerprint_row declared = full;
    declared.stats.level = severity::warn;
    declared.stats.level_t = 4;
    declared.stats.level_calls = 2;
    declared.stats.level_workers = 2;
    struct order {
      const char* name;
      std::vector<fingerprint_row> rows;
    };
    for (const auto& o :
         {order{"small, small", {small_a, small_b}}, order{"small, full", {small_a, full}},
          order{"full, small", {full, small_b}}, order{"declared, small", {declared, small_b}},
          order{"small, declared", {small_a, declared}}}) {
      CAPTURE(o.name);
      shared_economics_state later_only;
      restore_in_batches(later_only, {o.rows.back()}, 1);
      const auto want = later_only.summary("s");
      REQUIRE(want.has_value());
      for (std::size_t per_batch : {1u, 10u}) {  // in one batch, and across two
        CAPTURE(per_batch);
        shared_economics_state s;
        restore_in_batches(s, o.rows, per_batch);
        const auto rows = rows_of(s);
        REQUIRE(rows.size() == 1);
        CHECK(rows[0].stats == o.rows.back().stats);
        // The views count the later row only: nothing of the first stays.
        const auto got = s.summary("s");
        REQUIRE(got.has_value());
        CHECK(got->calls == want->calls);
        CHECK(got->verdicts == want->verdicts);
        CHECK(got->fingerprints == 1);
        CHECK(s.top_fingerprints("s", 5).size() == 1);
      }
    }
  }

  TEST_CASE("restore() of a snapshot goes through a batch: the same state back") {
    std::vector<fingerprint_row> rows;
    for (std::uint64_t i = 1; i <= 30; ++i) {
      rows.push_back(i % 4 == 0 ? twice_row("x", i, i) : once_row("y", i, i));
    }
    shared_economics_state a;
    restore_in_batches(a, rows, 8);
    shared_economics_state b;
    b.restore(a.snapshot());
    check_same(rows_of(b), rows);
  }
}
