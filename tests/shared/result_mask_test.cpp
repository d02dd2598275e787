#include <doctest/doctest.h>

#include "loopguard/result_mask.hpp"

using loopguard::mask_volatile;

TEST_SUITE("result_mask") {
  TEST_CASE("timestamps are masked") {
    CHECK(mask_volatile("at 2026-11-22T10:42:15Z done") == "at <time> done");
    CHECK(mask_volatile("at 2026-11-22T10:42:15.123+01:00 done") == "at <time> done");
    CHECK(mask_volatile("2026-11-22 10:42:15 INFO x") == "<time> INFO x");
    CHECK(mask_volatile("day 2026-11-22.") == "day <time>.");
    CHECK(mask_volatile("[10:42:15.500] ready") == "[<time>] ready");
  }

  TEST_CASE("durations are masked, plain numbers are not") {
    CHECK(mask_volatile("Ran 10 tests in 0.532s") == "Ran 10 tests in <dur>");
    CHECK(mask_volatile("took 12ms, then 3.4s") == "took <dur>, then <dur>");
    CHECK(mask_volatile("elapsed 1m30s") == "elapsed <dur>");
    CHECK(mask_volatile("elapsed 12 ms") == "elapsed <dur>");
    CHECK(mask_volatile("in 3 seconds") == "in <dur>");
    CHECK(mask_volatile("10 tests passed") == "10 tests passed");
    CHECK(mask_volatile("10 tests passed") != mask_volatile("11 tests passed"));
    CHECK(mask_volatile("version 1.2.3") == "version 1.2.3");
    CHECK(mask_volatile("5 sheep") == "5 sheep");
    CHECK(mask_volatile("12345678 bytes") == "12345678 bytes");
  }

  TEST_CASE("hex ids, addresses and UUIDs are masked") {
    CHECK(mask_volatile("at 0x7ffd5e8c1a2b in main") == "at <hex> in main");
    CHECK(mask_volatile("commit 3f2a9c1d8e7b6a5f") == "commit <hex>");
    CHECK(mask_volatile("id 550e8400-e29b-41d4-a716-446655440000 ok") == "id <uuid> ok");
    CHECK(mask_volatile("short abc1234") == "short abc1234");  // 7 digits: kept
  }

  TEST_CASE("pids are masked") {
    CHECK(mask_volatile("started pid 4242") == "started pid <pid>");
    CHECK(mask_volatile("PID: 77 exited") == "PID: <pid> exited");
    CHECK(mask_volatile("pid=1 x") == "pid=<pid> x");
  }

  TEST_CASE("matches need word boundaries") {
    CHECK(mask_volatile("abc12ms") == "abc12ms");
    CHECK(mask_volatile("x0x12") == "x0x12");
    CHECK(mask_volatile("rapid 12") == "rapid 12");
  }

  TEST_CASE("two runs that differ only in volatile parts mask equally") {
    const auto a = mask_volatile(
        "2026-11-22T10:00:00Z worker pid 100 finished in 1.5s (request 4f3c2b1a9d8e)");
    const auto b = mask_volatile(
        "2026-11-23T11:30:59Z worker pid 200 finished in 2.25s (request a1b2c3d4e5f6)");
    CHECK(a == b);
  }

  TEST_CASE("odd input never crashes") {
    CHECK(mask_volatile("") == "");
    CHECK(mask_volatile("0x") == "0x");
    CHECK(mask_volatile("2026-11-") == "2026-11-");
    CHECK(mask_volatile("12:3") == "12:3");
    CHECK(mask_volatile(std::string("\0\xff\xfe", 3)) == std::string("\0\xff\xfe", 3));
  }
}
