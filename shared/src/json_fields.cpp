#include "loopguard/json_fields.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "loopguard/json_input.hpp"
#include "loopguard/utf8.hpp"

namespace loopguard::json_fields {
namespace {

using nlohmann::json;

constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
constexpr std::size_t kMaxShownBytes = 40;  // of a value quoted in an error

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (auto n : names) (out += out.empty() ? "" : ", ") += n;
  return out;
}

std::string integer_range(std::uint64_t lo, std::uint64_t hi) {
  if (lo == 0 && hi == std::numeric_limits<std::uint64_t>::max()) return "a non-negative integer";
  return "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
}

std::string number_range(double lo, double hi) {
  const double max = std::numeric_limits<double>::max();
  if (lo == -max && hi == max) return "a number";
  std::ostringstream s;
  s << std::setprecision(15) << "a number in " << lo << ".." << hi;
  return s.str();
}

// The integer a JSON number stands for: no fractional part (10.0 is 10), not negative.
std::optional<std::uint64_t> as_integer(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    return i < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(i));
  }
  if (!v.is_number_float()) return std::nullopt;
  const double d = v.get<double>();
  if (std::trunc(d) != d || d < 0 || d >= 18446744073709551616.0) return std::nullopt;
  return static_cast<std::uint64_t>(d);
}

// An object of at most this many members is searched in order, lengths compared first: for the
// few keys of a protocol event that is cheaper than the tree's string comparisons.
constexpr std::size_t kScannedMembers = 8;

json::object_t::const_iterator scan(const json::object_t& members, std::string_view name) {
  auto it = members.begin();
  while (it != members.end() && !(it->first.size() == name.size() && it->first == name)) ++it;
  return it;
}

}  // namespace

std::string describe(const json& v) {
  std::string s = json_input::dump(v);
  if (s.size() <= kMaxShownBytes) return s;
  s.resize(utf8::cut_point(s, kMaxShownBytes - 3));
  return s + "...";
}

status field_error(std::string_view path, std::string_view expected, const json& got,
                   std::string_view code) {
  std::string m =
      std::string(path) + ": expected " + std::string(expected) + ", got " + describe(got);
  return code.empty() ? status::error(std::move(m)) : status::error(code, std::move(m));
}

// ---- reader ----

reader::reader(const json& doc, options opts)
    : object(this, doc.is_object() ? &doc : nullptr, nullptr, {}, kNoIndex),
      doc_(doc),
      opts_(opts) {
  if (!doc.is_object()) {
    const std::string_view name = opts_.prefix.empty() ? opts_.name : opts_.prefix;
    record(std::string(name), "expected an object, got " + describe(doc), {});
  } else if (opts_.unknown == unknown_keys::refuse) {
    asked_[&doc];
  }
}

void reader::record(std::string path, std::string message, std::string_view code) {
  if (!error_.ok()) return;
  if (code.empty()) code = opts_.code;
  std::string m = std::move(path) + ": " + std::move(message);
  error_ = code.empty() ? status::error(std::move(m)) : status::error(code, std::move(m));
}

status reader::finish() {
  if (error_.ok() && opts_.unknown == unknown_keys::refuse && doc_.is_object()) {
    check_unknown(doc_, std::string(opts_.prefix));
  }
  return error_;
}

void reader::check_unknown(const json& obj, const std::string& path) {
  const auto& asked = asked_[&obj];
  const std::string dot = path.empty() ? "" : path + ".";
  for (const auto& [k, v] : obj.items()) {
    if (!error_.ok()) return;
    if (asked.count(k) == 0) {
      std::vector<std::string_view> known(asked.begin(), asked.end());
      return record(dot + k, "unknown key, expected one of " + join(known), {});
    }
    if (v.is_object() && asked_.count(&v) != 0) check_unknown(v, dot + k);
    if (!v.is_array()) continue;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (asked_.count(&v[i]) != 0) check_unknown(v[i], dot + k + "[" + std::to_string(i) + "]");
    }
  }
}

// ---- object: paths and lookup ----

object::object(reader* r, const json* node, const object* parent, std::string_view segment,
               std::size_t index)
    : r_(r), node_(node), parent_(parent), segment_(segment), index_(index) {}

void object::append_path(std::string& out) const {
  if (parent_ == nullptr) {
    out += r_->opts_.prefix;
    return;
  }
  parent_->append_path(out);
  if (!out.empty()) out += '.';
  out += segment_;
  if (index_ != kNoIndex) out += "[" + std::to_string(index_) + "]";
}

std::string object::path_of(std::string_view path) const {
  std::string out;
  append_path(out);
  if (!path.empty()) {
    if (!out.empty()) out += '.';
    out += path;
  }
  if (out.empty()) out = r_->opts_.name;
  return out;
}

void object::fail(std::string_view path, std::string_view expected, const json& got,
                  std::string_view code) {
  if (!ok()) return;
  r_->record(path_of(path), "expected " + std::string(expected) + ", got " + describe(got), code);
}

void object::fail_message(std::string_view path, std::string_view message, std::string_view code) {
  if (ok()) r_->record(path_of(path), std::string(message), code);
}

inline const json* object::lookup(const json& obj, std::string_view name) {
  r_->ask(&obj, name);
  // The map itself: obj is an object (every node is checked when reached).
  const auto& members = *obj.get_ptr<const json::object_t*>();
  const auto it = members.size() <= kScannedMembers ? scan(members, name) : members.find(name);
  if (it == members.end() || (r_->opts_.null_is_absent && it->second.is_null())) return nullptr;
  return &it->second;
}

const json* object::find(key k) {
  if (node_ == nullptr || !ok()) return nullptr;
  return k.nested ? find_nested(k) : lookup(*node_, k.path);
}

// Walks `k.path` from this object, one key at a time; every object on the way must be one.
const json* object::find_nested(key k) {
  const json* at = node_;
  std::string_view rest = k.path;
  while (true) {
    const auto dot = rest.find('.');
    const std::string_view step = rest.substr(0, dot);
    at = lookup(*at, step);
    if (dot == std::string_view::npos || at == nullptr) return at;
    if (!at->is_object()) {
      fail(k.path.substr(0, static_cast<std::size_t>(step.data() - k.path.data()) + step.size()),
           "an object", *at);
      return nullptr;
    }
    rest.remove_prefix(dot + 1);
  }
}

const json* object::find_object(std::string_view path) {
  const json* v = find(path);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) {
    fail(path, "an object", *v);
    return nullptr;
  }
  if (r_->opts_.unknown == unknown_keys::refuse) r_->asked_[v];
  return v;
}

object object::at(std::string_view path) {
  return object(r_, find_object(path), this, path, kNoIndex);
}

object object::member(std::string_view key) {
  const json* v = nullptr;
  if (ok() && node_ != nullptr) {
    const auto it = node_->find(key);
    if (it != node_->end()) v = &*it;
    r_->ask(node_, key);
  }
  if (v != nullptr && !v->is_object()) {
    fail(key, "an object", *v);
    v = nullptr;
  }
  if (v != nullptr && r_->opts_.unknown == unknown_keys::refuse) r_->asked_[v];
  return object(r_, v, this, key, kNoIndex);
}

std::vector<std::string_view> object::keys(std::string_view path) {
  std::vector<std::string_view> out;
  const json* v = find_object(path);
  if (v == nullptr) return out;
  for (const auto& [k, value] : v->items()) {
    // items() gives keys by reference into the object, which outlives the reader.
    const std::string& name = k;
    out.push_back(name);
    r_->ask(v, name);
  }
  return out;
}

const json* object::array(key k) {
  const json* v = find(k);
  if (v == nullptr) missing(k, [] { return "an array"; });
  if (v != nullptr && !v->is_array()) {
    fail(k.path, "an array", *v);
    return nullptr;
  }
  return v;
}

object object::item(std::string_view array_path, std::size_t index) {
  return item(find(array_path), array_path, index);
}

object object::item(const json* list, std::string_view array_path, std::size_t index) {
  const json* v =
      list != nullptr && list->is_array() && index < list->size() ? &(*list)[index] : nullptr;
  if (v != nullptr && !v->is_object()) {
    fail_message(std::string(array_path) + "[" + std::to_string(index) + "]",
                 "expected an object, got " + describe(*v));
    v = nullptr;
  }
  if (v != nullptr && r_->opts_.unknown == unknown_keys::refuse) r_->asked_[v];
  return object(r_, v, this, array_path, index);
}

// ---- object: typed getters ----

bool object::read_integer(key k, std::uint64_t& out, std::uint64_t lo, std::uint64_t hi) {
  const json* v = find(k);
  if (v == nullptr) return missing(k, [&] { return integer_range(lo, hi); });
  const auto n = as_integer(*v);
  if (!n || *n < lo || *n > hi) {
    fail(k.path, integer_range(lo, hi), *v);
    return false;
  }
  out = *n;
  return true;
}

bool object::number(key k, double& out, double lo, double hi) {
  const json* v = find(k);
  if (v == nullptr) return missing(k, [&] { return number_range(lo, hi); });
  const double d = v->is_number() ? v->get<double>() : 0;
  if (!v->is_number() || d < lo || d > hi) {
    fail(k.path, number_range(lo, hi), *v);
    return false;
  }
  out = d;
  return true;
}

bool object::boolean(key k, bool& out) {
  const json* v = find(k);
  if (v == nullptr) return missing(k, [] { return "true or false"; });
  if (!v->is_boolean()) {
    fail(k.path, "true or false", *v);
    return false;
  }
  out = v->get<bool>();
  return true;
}

bool object::boolean(key k, std::optional<bool>& out) {
  bool b = false;
  if (!boolean(k, b)) return false;
  out = b;
  return true;
}

bool object::string(key k, std::string& out, std::size_t max_bytes) {
  const auto expected = [&] {
    return max_bytes == std::numeric_limits<std::size_t>::max()
               ? std::string("a string")
               : "a string of at most " + std::to_string(max_bytes) + " bytes";
  };
  const json* v = find(k);
  if (v == nullptr) return missing(k, expected);
  const auto* s = v->get_ptr<const std::string*>();
  if (s == nullptr || s->size() > max_bytes) {
    fail(k.path, expected(), *v);
    return false;
  }
  out = *s;
  return true;
}

bool object::identifier(key k, std::string& out, std::size_t max_bytes) {
  std::string s;
  if (!string(k, s, max_bytes)) return false;
  if (!utf8::is_identifier(s)) {
    const auto code = r_->opts_.identifier_code;
    fail(k.path,
         "valid UTF-8 (an identifier may not hold invalid bytes, lone surrogates or U+FFFD)",
         json(s), code);
    return false;
  }
  out = std::move(s);
  return true;
}

bool object::strings(key k, std::vector<std::string>& out) {
  const json* v = find(k);
  if (v == nullptr) return missing(k, [] { return "an array of strings"; });
  std::vector<std::string> items;
  for (std::size_t i = 0; v->is_array() && i < v->size(); ++i) {
    if (!(*v)[i].is_string()) break;
    items.push_back((*v)[i].get<std::string>());
  }
  if (!v->is_array() || items.size() != v->size()) {
    fail(k.path, "an array of strings", *v);
    return false;
  }
  out = std::move(items);
  return true;
}

bool object::one_of(key k, std::string_view& out, const std::vector<std::string_view>& names) {
  const json* v = find(k);
  if (v == nullptr) return missing(k, [&] { return "one of " + join(names); });
  if (v->is_string()) {
    for (auto n : names) {
      if (n == v->get_ref<const std::string&>()) {
        out = n;
        return true;
      }
    }
  }
  fail(k.path, "one of " + join(names), *v);
  return false;
}

const json* object::value(key k) {
  const json* v = find(k);
  if (v == nullptr) missing(k, [] { return "a value"; });
  return v;
}

bool object::any_object(key k, json& out) {
  const json* v = find(k);
  if (v == nullptr) return missing(k, [] { return "an object"; });
  if (!v->is_object()) {
    fail(k.path, "an object", *v);
    return false;
  }
  out = *v;
  return true;
}

bool object::has(std::string_view path) {
  return find(path) != nullptr;
}

}  // namespace loopguard::json_fields
