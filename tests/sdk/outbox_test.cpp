// The daemon client's outbox: numbering, the overflow policy (drop the newest, declare a gap),
// acknowledgements, resending after a reconnect, and refused events.
#include <doctest/doctest.h>

#include <variant>

#include "client/error_policy.hpp"
#include "client/outbox.hpp"

using loopguard::client::outbox;
namespace protocol = loopguard::protocol;

namespace {

protocol::event call(const char* tool) {
  protocol::event e;
  e.tool = tool;
  return e;
}

std::vector<std::uint64_t> seqs(const protocol::events& b) {
  std::vector<std::uint64_t> out;
  for (const auto& e : b.items) out.push_back(e.seq);
  return out;
}

}  // namespace

TEST_SUITE("client outbox") {
  TEST_CASE("events are numbered from 1 and handed out in batches, in order") {
    outbox box(10);
    for (int i = 0; i < 5; ++i) CHECK(box.push(call("search")) == std::uint64_t(i + 1));
    auto first = box.next(3);
    REQUIRE(std::holds_alternative<protocol::events>(first));
    CHECK(seqs(std::get<protocol::events>(first)) == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(seqs(std::get<protocol::events>(box.next(3))) == std::vector<std::uint64_t>{4, 5});
    CHECK(std::holds_alternative<std::monostate>(box.next(3)));
    CHECK(box.events() == 5);
    CHECK(box.counters().resent == 0);
  }

  TEST_CASE("when full, the newest events are dropped into one gap, sent in its place") {
    outbox box(3);
    for (int i = 0; i < 7; ++i) box.push(call("t"));
    CHECK(box.events() == 3);
    CHECK(box.counters().overflow_dropped == 4);
    CHECK(box.counters().pushed == 7);
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{1, 2, 3});
    const auto g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 4);
    CHECK(std::get<protocol::gap>(g).to == 7);
    CHECK(box.counters().gaps == 1);
    // Room again after an acknowledgement: the next event follows the gap.
    box.acknowledge(3);
    CHECK(box.push(call("t")) == 8);
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{8});
  }

  TEST_CASE("a gap already sent does not grow, a new one follows it") {
    outbox box(1);
    box.push(call("a"));
    box.push(call("b"));  // dropped: gap 2..2
    (void)box.next(10);
    (void)box.next(10);   // the gap is handed out
    box.push(call("c"));  // still full: a new gap 3..3
    const auto g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 3);
    CHECK(std::get<protocol::gap>(g).to == 3);
  }

  TEST_CASE("a reconnect resends everything after the daemon's last_ack, counted as resent") {
    outbox box(10);
    for (int i = 0; i < 6; ++i) box.push(call("t"));
    (void)box.next(10);
    box.acknowledge(2);
    box.resume(4);  // the daemon holds 1..4
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{5, 6});
    CHECK(box.counters().resent == 2);
    CHECK(box.events() == 2);
    CHECK(box.acknowledged() == 4);
  }

  TEST_CASE("a daemon that lost acknowledged numbers is told with a gap") {
    outbox box(10);
    for (int i = 0; i < 4; ++i) box.push(call("t"));
    (void)box.next(10);
    box.acknowledge(3);
    box.resume(1);
    const auto g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 2);
    CHECK(std::get<protocol::gap>(g).to == 3);
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{4});
  }

  TEST_CASE("a partly acknowledged gap keeps only what is still owed") {
    outbox box(1);
    box.push(call("a"));
    for (int i = 0; i < 4; ++i) box.push(call("x"));  // gap 2..5
    box.acknowledge(3);
    box.resume(3);
    const auto g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 4);
    CHECK(std::get<protocol::gap>(g).to == 5);
  }

  TEST_CASE("a refused event becomes a gap and is never sent again") {
    outbox box(10);
    for (int i = 0; i < 3; ++i) box.push(call("t"));
    (void)box.next(10);
    CHECK(box.refuse(2));
    CHECK_FALSE(box.refuse(2));
    CHECK_FALSE(box.refuse(99));
    CHECK(box.counters().refused_dropped == 1);
    CHECK(box.oldest_event() == 1);
    box.resume(0);
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{1});
    const auto g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 2);
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{3});
  }

  TEST_CASE(
      "an expired incarnation: nothing unacknowledged is resent, all of it is declared lost") {
    outbox box(10);
    for (int i = 0; i < 5; ++i) box.push(call("t"));
    (void)box.next(10);
    box.acknowledge(2);
    box.abandon();  // the daemon refused the hello with incarnation_expired
    CHECK(box.events() == 0);
    CHECK(box.counters().abandoned == 3);
    box.push(call("after"));  // numbering goes on: 6
    box.resume(0);            // the new incarnation's welcome: the daemon holds nothing
    auto g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 1);
    CHECK(std::get<protocol::gap>(g).to == 2);
    g = box.next(10);
    REQUIRE(std::holds_alternative<protocol::gap>(g));
    CHECK(std::get<protocol::gap>(g).from == 3);
    CHECK(std::get<protocol::gap>(g).to == 5);
    CHECK(seqs(std::get<protocol::events>(box.next(10))) == std::vector<std::uint64_t>{6});
    CHECK(box.counters().resent == 0);
    box.acknowledge(6);
    CHECK(box.events() == 0);
    CHECK(std::holds_alternative<std::monostate>(box.next(10)));
  }
}

TEST_SUITE("client error policy") {
  using loopguard::client::classify;
  using loopguard::client::error_class;
  TEST_CASE("every protocol code has a class, unknown codes retry") {
    CHECK(classify("unauthorized") == error_class::fatal);
    CHECK(classify("unsupported_version") == error_class::fatal);
    CHECK(classify("bad_message") == error_class::per_event);
    CHECK(classify("invalid_utf8") == error_class::fatal);  // the hello's identifiers
    CHECK(classify("shutting_down") == error_class::retry);
    CHECK(classify("too_many_connections") == error_class::retry);
    CHECK(classify("not_owner") == error_class::retry);  // the proxy routes the retry
    CHECK(classify("something_new") == error_class::retry);
    CHECK(classify("incarnation_expired") == error_class::new_incarnation);
  }

  TEST_CASE("refusals without a seq drop the oldest event after three at the same point") {
    loopguard::client::refusal_tracker r;
    CHECK(r.on_refusal(5, 6) == 0);
    CHECK(r.on_refusal(5, 6) == 0);
    CHECK(r.on_refusal(5, 6) == 6);
    CHECK(r.on_refusal(5, 7) == 0);  // counting starts again
    r.on_ack(9);
    CHECK(r.on_refusal(9, 10) == 0);
  }

  TEST_CASE("without the feature cost: costs are left out and a charge becomes a gap") {
    outbox box(10);
    box.push(call("search"));
    protocol::event costly = call("search");
    costly.spent = {100, 1.5};
    box.push(costly);
    protocol::event charge = call("search");
    charge.charge = true;
    charge.spent = {5, 0};
    box.push(charge);
    box.push(costly);
    auto first = box.next(10, false);
    REQUIRE(std::holds_alternative<protocol::events>(first));
    const auto& items = std::get<protocol::events>(first).items;
    CHECK(seqs(std::get<protocol::events>(first)) == std::vector<std::uint64_t>{1, 2});
    CHECK(items[1].spent.empty());
    auto second = box.next(10, false);
    REQUIRE(std::holds_alternative<protocol::gap>(second));
    CHECK(std::get<protocol::gap>(second).from == 3);
    CHECK(std::get<protocol::gap>(second).to == 3);
    CHECK(seqs(std::get<protocol::events>(box.next(10, false))) == std::vector<std::uint64_t>{4});
    CHECK(box.counters().charges_dropped == 1);
    CHECK(box.events() == 3);
    // With the feature (a newer daemon after a reconnect) what is left goes as it is.
    box.resume(0);
    auto again = box.next(10, true);
    REQUIRE(std::holds_alternative<protocol::events>(again));
    CHECK(std::get<protocol::events>(again).items[1].spent == protocol::cost{100, 1.5});
  }
}
