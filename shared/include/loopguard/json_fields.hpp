// Reads the fields of a parsed JSON document (json_input.hpp parses the text) under one set of
// rules, for every reader in the project: the SDK config, the swarm rule, the daemon config, the
// protocol and the trace format (docs/conventions.md, "Reading JSON").
//
//   json_fields::reader r(doc, {.name = "configuration"});
//   r.integer("detectors.exact.warn_at", c.exact.steps.warn_at, 1, 1000000);
//   r.boolean("detectors.exact.enabled", c.exact.enabled);
//   if (status s = r.finish(); !s.ok()) return s;  // the first error, else the first unknown key
//
// The rules:
//  - A field is named by its key path from the reader's object, keys joined by '.'
//    ("detectors.exact.warn_at"); array elements read through item() show as "events[3]".
//  - A field that is absent leaves the output alone (the caller's value is the default); one
//    marked required() is an error when absent.
//  - An integer is a JSON number without a fractional part: 10 and 10.0 (and 1e1) are the
//    integer 10; 10.5 is not an integer. Every reader applies this same rule.
//  - Errors read `PATH: expected WHAT, got VALUE` (the value as JSON, long ones cut), e.g.
//    `detectors.exact.warn_at: expected an integer in 1..1000000, got "x"`; an absent required
//    field is `got nothing`; an unknown key is `PATH: unknown key, expected one of A, B, C`.
//  - The first error is kept: every later read is a no-op, and finish() returns it.
//  - Unknown keys (options::unknown_keys == refuse): finish() reports a key no read asked for,
//    in every object a read went into. The known keys are the ones asked for, never a list kept
//    by hand.
//
// Not thread-safe; the document and every path string passed in must outlive the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopguard/status.hpp"

namespace loopguard::json_fields {

enum class unknown_keys { refuse, ignore };

struct options {
  // How the document is named when an error is about the document itself
  // ("configuration: expected an object, got an array"). Paths of fields never carry it.
  std::string_view name = "document";
  // Prefix of every path ("swarm": errors read "swarm.threshold: ..."); empty for none.
  std::string_view prefix = {};
  unknown_keys unknown = unknown_keys::refuse;
  // A key whose value is null counts as absent (the protocol's rule); otherwise null is a value
  // of the wrong type.
  bool null_is_absent = false;
  // The stable code of every error (status::code()); empty for none.
  std::string_view code = {};
  // The code of an identifier that is not valid UTF-8 (identifier()); empty: `code`.
  std::string_view identifier_code = {};
};

// A field's key path, optional unless made with required(). Whether the path has more than one
// key is known when the key is made (at compile time for a literal): a plain key is looked up
// directly, without walking the path.
struct key {
  // NOLINTNEXTLINE(google-explicit-constructor): "a.b" reads best
  constexpr key(std::string_view p) : path(p), nested(p.find('.') != std::string_view::npos) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr key(const char* p) : key(std::string_view(p)) {}
  std::string_view path;
  bool required = false;
  bool nested;  // path holds '.'
};
constexpr key required(std::string_view path) {
  key k(path);
  k.required = true;
  return k;
}

// An enumerated value's JSON spelling.
template <class E>
struct choice {
  std::string_view name;
  E value;
};

class reader;

// A view of one object of the document: every getter reads a field by its key path from here.
// Getters return true when they stored a value, false when the field is absent or after an
// error. A view must not outlive the view (or reader) it was made from.
class object {
 public:
  // An unsigned integer in lo..hi (the 10.0 rule above).
  template <class T>
  bool integer(key k, T& out, std::uint64_t lo = 0,
               std::uint64_t hi = std::numeric_limits<T>::max()) {
    static_assert(std::is_unsigned_v<T>);
    std::uint64_t v = 0;
    if (!read_integer(k, v, lo, hi)) return false;
    out = static_cast<T>(v);
    return true;
  }
  // Any number in lo..hi (JSON numbers are finite: json_input refuses the rest).
  bool number(key k, double& out, double lo = -std::numeric_limits<double>::max(),
              double hi = std::numeric_limits<double>::max());
  bool boolean(key k, bool& out);
  bool boolean(key k, std::optional<bool>& out);
  // A string of at most max_bytes bytes.
  bool string(key k, std::string& out,
              std::size_t max_bytes = std::numeric_limits<std::size_t>::max());
  // A string that is valid UTF-8 without U+FFFD (utf8::is_identifier): json_input repaired the
  // text, so an identifier that held invalid bytes is refused, never repaired.
  bool identifier(key k, std::string& out, std::size_t max_bytes);
  bool strings(key k, std::vector<std::string>& out);  // an array of strings
  // One of the given spellings; the error lists them in the given order.
  template <class E>
  bool one_of(key k, E& out, std::initializer_list<choice<E>> choices) {
    std::string_view name;
    std::vector<std::string_view> names;
    for (const auto& c : choices) names.push_back(c.name);
    if (!one_of(k, name, names)) return false;
    for (const auto& c : choices) {
      if (c.name == name) out = c.value;
    }
    return true;
  }
  // One of `names` (a list known only at run time, e.g. the presets); `out` views into `names`.
  bool one_of(key k, std::string_view& out, const std::vector<std::string_view>& names);
  // A value of any type, taken whole (its keys are not checked); nullptr when absent.
  const nlohmann::json* value(key k);
  // An object taken whole, e.g. a rule another component reads.
  bool any_object(key k, nlohmann::json& out);
  // Whether the field is there (a null counts as absent under null_is_absent). Asks for the key.
  bool has(std::string_view path);

  // The object at `path`, to read fields from (an absent one reads as empty).
  object at(std::string_view path);
  // The member `key` of this object, taken literally (a tool name may hold '.').
  object member(std::string_view key);
  // The keys of the object at `path`, each asked for (so none is unknown).
  std::vector<std::string_view> keys(std::string_view path);
  // The array at `path` (nullptr when absent or not an array: the latter is an error), and one
  // element of it as an object to read ("events[3].seq").
  const nlohmann::json* array(key k);
  object item(std::string_view array_path, std::size_t index);
  // The same for the array `list` that array(array_path) returned (no second lookup).
  object item(const nlohmann::json* list, std::string_view array_path, std::size_t index);

  // Records an error at `path` (first error kept): `PATH: expected WHAT, got VALUE`.
  void fail(std::string_view path, std::string_view expected, const nlohmann::json& got,
            std::string_view code = {});
  // Records `PATH: message` with `code` (empty: the reader's code).
  void fail_message(std::string_view path, std::string_view message, std::string_view code = {});
  bool ok() const;  // defined below reader
  // The full path of `path` below this object, as errors show it.
  std::string path_of(std::string_view path) const;

 protected:
  object(reader* r, const nlohmann::json* node, const object* parent, std::string_view segment,
         std::size_t index);

 private:
  friend class reader;
  bool read_integer(key k, std::uint64_t& out, std::uint64_t lo, std::uint64_t hi);
  const nlohmann::json* find(key k);
  // The member `name` of the object `obj` (asked for); nullptr when absent.
  const nlohmann::json* lookup(const nlohmann::json& obj, std::string_view name);
  const nlohmann::json* find_nested(key k);
  // An absent field: an error `PATH: expected WHAT, got nothing` when it is required.
  template <class Expected>
  bool missing(key k, Expected expected) {
    if (k.required && ok())
      fail_message(k.path, "expected " + std::string(expected()) + ", got nothing");
    return false;
  }
  const nlohmann::json* find_object(std::string_view path);
  void append_path(std::string& out) const;

  reader* r_;
  const nlohmann::json* node_;  // nullptr: absent, every field reads as absent
  const object* parent_;
  std::string_view segment_;  // path below parent_, or the array path of an item
  std::size_t index_;         // npos unless an array item
};

// The document's top object, and the state every view of it shares. Not copyable.
class reader : public object {
 public:
  explicit reader(const nlohmann::json& doc, options opts = {});
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;

  // The first error so far (success when none).
  const loopguard::status& first_error() const { return error_; }
  // The first error, else (under unknown_keys::refuse) the first key no read asked for.
  loopguard::status finish();

 private:
  friend class object;
  void record(std::string path, std::string message, std::string_view code);
  void ask(const nlohmann::json* obj, std::string_view key) {
    if (opts_.unknown == unknown_keys::refuse) asked_[obj].emplace(key);
  }
  void check_unknown(const nlohmann::json& obj, const std::string& path);

  const nlohmann::json& doc_;
  options opts_;
  loopguard::status error_;
  // Per object a read went into: the keys asked for (only under unknown_keys::refuse).
  std::map<const nlohmann::json*, std::set<std::string, std::less<>>> asked_;
};

inline bool object::ok() const {
  return r_->error_.ok();
}

// What came, for an error: the value as JSON, cut to a few dozen bytes.
std::string describe(const nlohmann::json& v);
// `PATH: expected WHAT, got VALUE` as a status, for checks that span fields (validate()).
loopguard::status field_error(std::string_view path, std::string_view expected,
                              const nlohmann::json& got, std::string_view code = {});

}  // namespace loopguard::json_fields
