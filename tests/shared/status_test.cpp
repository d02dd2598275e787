#include "loopguard/status.hpp"

#include <doctest/doctest.h>

#include <string>

using loopguard::result;
using loopguard::status;

namespace {

result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return status::error(std::string("not a digit: ") + c);
  return c - '0';
}

status check_even(int n) {
  if (n % 2 != 0) return status::error("odd", std::to_string(n) + " is odd");
  return {};
}

}  // namespace

TEST_CASE("status: success by default, a failure carries its message and code") {
  const status fine;
  CHECK(fine.ok());
  CHECK(fine.message().empty());
  CHECK(fine.code().empty());

  const status odd = check_even(3);
  CHECK_FALSE(odd.ok());
  CHECK(odd.code() == "odd");
  CHECK(odd.message() == "3 is odd");
  CHECK(check_even(4).ok());

  const status plain = status::error("disk full");
  CHECK_FALSE(plain.ok());
  CHECK(plain.code().empty());
  CHECK(plain.with_context("store.db: ").message() == "store.db: disk full");
  CHECK(fine.with_context("store.db: ").ok());
}

TEST_CASE("result: a value, or the status saying why there is none") {
  const auto seven = parse_digit('7');
  REQUIRE(seven.has_value());
  CHECK(*seven == 7);

  const auto bad = parse_digit('x');
  REQUIRE(bad.has_error());
  CHECK(bad.error().message() == "not a digit: x");
  CHECK_THROWS_AS(bad.value(), loopguard::status_error);
  try {
    (void)bad.value();
  } catch (const loopguard::status_error& e) {
    CHECK(std::string(e.what()) == "not a digit: x");
    CHECK(e.status() == bad.error());
  }

  const result<void> done;
  CHECK(done.has_value());
}

TEST_CASE("regression (fuzz): a reference to the message of result<T>::error() does not dangle") {
  // error() returns a copy; message() of a temporary returns by value, so the reference below
  // extends the string's life (ASan flagged a stack-use-after-scope when it returned a reference).
  const auto bad = parse_digit('x');
  const std::string& m = bad.error().message();
  const std::string& c = bad.error().code();
  CHECK(m == "not a digit: x");
  CHECK(c.empty());
}
