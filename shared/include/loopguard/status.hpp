// The project's one error idiom (docs/conventions.md, "Errors"):
//
//   status     success, or a failure with a message that names what was wrong (file and line,
//              field, limit) and, where a caller must tell failures apart, a stable code
//              (the protocol's error codes: protocol.hpp `codes`). Modelled on leveldb's Status.
//   result<T>  a T, or the status saying why there is none: boost::system::result with our
//              status as its error type.
//
//   status s = load(...);              result<store> r = open(...);
//   if (!s.ok()) return s;             if (!r) return r.error();
//                                      use(*r);
//
// Never std::optional<std::string> for an error, never a bool with an out-parameter string.
#pragma once

#include <boost/system/result.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace loopguard {

class [[nodiscard]] status {
 public:
  status() = default;  // success

  static status error(std::string message) { return status(std::string(), std::move(message)); }
  // `code`: a stable identifier a program may branch on (never empty for a coded failure).
  static status error(std::string_view code, std::string message) {
    return status(std::string(code), std::move(message));
  }

  bool ok() const noexcept { return !failed_; }
  // Empty on success. On a temporary status the string is returned by value, so that
  // `const std::string& m = r.error().message();` is safe although result<T>::error()
  // returns a copy (a reference into that copy would dangle).
  const std::string& message() const& noexcept { return message_; }
  std::string message() && noexcept { return std::move(message_); }
  // Empty on success and for failures without a code.
  const std::string& code() const& noexcept { return code_; }
  std::string code() && noexcept { return std::move(code_); }

  // The same failure with `prefix` in front of the message ("config.json: " + message).
  status with_context(std::string_view prefix) const {
    if (ok()) return *this;
    return status(code_, std::string(prefix) + message_);
  }

  friend bool operator==(const status&, const status&) = default;

 private:
  status(std::string code, std::string message)
      : failed_(true), code_(std::move(code)), message_(std::move(message)) {}

  bool failed_ = false;
  std::string code_, message_;
};

// What result<T>::value() throws when it holds a failure (found by boost::system through ADL).
class status_error : public std::runtime_error {
 public:
  explicit status_error(const status& s) : std::runtime_error(s.message()), status_(s) {}
  const loopguard::status& status() const noexcept { return status_; }

 private:
  loopguard::status status_;
};

[[noreturn]] inline void throw_exception_from_error(const status& s,
                                                    const boost::source_location&) {
  throw status_error(s);
}

template <class T>
using result = boost::system::result<T, status>;

}  // namespace loopguard
