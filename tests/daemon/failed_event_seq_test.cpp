// failed_event_seq: the event a refused frame was about (feature error_seq).
#include <doctest/doctest.h>

#include <limits>

#include "loopguard/protocol.hpp"
#include "test_util.hpp"

using namespace loopguard;
using namespace loopguard::protocol;

namespace {

// The seq failed_event_seq finds for a frame that must be refused.
std::optional<std::uint64_t> seq_of_refused(const std::string& frame, bool binary = false) {
  const status e = binary ? decode_binary(frame).error() : parse(frame).error();
  REQUIRE_FALSE(e.ok());
  return failed_event_seq(frame, binary, e);
}

events batch(std::uint64_t first, std::size_t n) {
  events b;
  for (std::size_t i = 0; i < n; ++i) b.items.push_back(test::wire_event(first + i, 5, 1.0));
  return b;
}

}  // namespace

TEST_SUITE("protocol") {
  TEST_CASE("failed_event_seq: the seq of the JSON event a parse failure names") {
    auto b = batch(41, 3);
    b.items[1].tool = std::string(kMaxToolBytes + 1, 'x');
    CHECK(seq_of_refused(serialize(b)) == 42u);
    // The seq read as parse() reads it (10.0 is 10), and any field of the event.
    CHECK(seq_of_refused(R"({"type":"events","events":[)"
                         R"({"seq":10.0,"tool":"t","exact":"zz","structural":"0","t":1}]})") ==
          10u);
    // No readable seq, or an error about no event: none.
    CHECK(seq_of_refused(R"({"type":"events","events":[{"tool":"t","t":1}]})") == std::nullopt);
    CHECK(seq_of_refused(R"({"type":"events","events":[{"seq":-1,"tool":"t"}]})") == std::nullopt);
    CHECK(seq_of_refused(R"({"type":"nope"})") == std::nullopt);
    CHECK(seq_of_refused(R"({"type":"events","events":{}})") == std::nullopt);
    CHECK(seq_of_refused("not json") == std::nullopt);
  }

  TEST_CASE("failed_event_seq: the seq of the binary event a decode failure names") {
    auto b = batch(7, 3);
    b.items[2].t = std::numeric_limits<double>::infinity();
    CHECK(seq_of_refused(encode_binary(b), true) == 9u);
    b = batch(7, 3);
    b.items[1].summary = std::string(kMaxSummaryBytes + 1, 's');
    CHECK(seq_of_refused(encode_binary(b), true) == 8u);
    CHECK(seq_of_refused("LGB1\x01", true) == std::nullopt);  // truncated header
    CHECK(seq_of_refused("XXXX", true) == std::nullopt);
    // An event cut inside its seq: nothing readable.
    const std::string whole = encode_binary(batch(1, 1));
    CHECK(seq_of_refused(whole.substr(0, 4 + 8 + 5), true) == std::nullopt);
  }
}
