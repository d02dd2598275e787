#include "config_reader.hpp"

#include <cmath>
#include <sstream>
#include "loopguard/json_input.hpp"

namespace loopguard::sdk {

const nlohmann::json& config_reader::empty_object() {
  static const nlohmann::json e = nlohmann::json::object();
  return e;
}

config_reader::config_reader(const nlohmann::json& obj, std::string path, std::string* error)
    : obj_(&obj), path_(std::move(path)), error_(error) {
  if (ok() && !obj.is_object()) {
    *error_ = (path_.empty() ? std::string("configuration") : path_) +
              ": must be a JSON object, got " + obj.type_name();
  }
}

std::string config_reader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void config_reader::fail(const std::string& key, const std::string& message) {
  if (ok()) *error_ = key_path(key) + ": " + message;
}

const nlohmann::json* config_reader::find(const char* key) {
  known_.insert(key);
  if (!ok() || !obj_->is_object()) return nullptr;
  auto it = obj_->find(key);
  return it == obj_->end() ? nullptr : &*it;
}

config_reader config_reader::child(const char* key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return config_reader(empty_object(), key_path(key), error_);
  return config_reader(*v, key_path(key), error_);
}

void config_reader::read(const char* key, bool& out) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_boolean())
    return fail(key, std::string("must be true or false, got ") + json_input::dump(*v));
  out = v->get<bool>();
}

void config_reader::read(const char* key, std::uint32_t& out, std::uint32_t lo, std::uint32_t hi) {
  std::uint64_t wide = out;
  read(key, wide, lo, hi);
  out = static_cast<std::uint32_t>(wide);
}

void config_reader::read(const char* key, std::uint64_t& out, std::uint64_t lo, std::uint64_t hi) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return;
  const bool integral = v->is_number_unsigned() || (v->is_number_integer() && *v >= 0) ||
                        (v->is_number_float() && std::trunc(v->get<double>()) == v->get<double>() &&
                         v->get<double>() >= 0);
  const double as_double = v->is_number() ? v->get<double>() : -1;
  if (!integral || as_double < static_cast<double>(lo) || as_double > static_cast<double>(hi)) {
    std::ostringstream m;
    m << "must be an integer from " << lo << " to " << hi << ", got " << json_input::dump(*v);
    return fail(key, m.str());
  }
  out = static_cast<std::uint64_t>(as_double);
}

void config_reader::read(const char* key, double& out, double lo, double hi) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_number() || v->get<double>() < lo || v->get<double>() > hi) {
    std::ostringstream m;
    m << "must be a number from " << lo << " to " << hi << ", got " << json_input::dump(*v);
    return fail(key, m.str());
  }
  out = v->get<double>();
}

void config_reader::read(const char* key, std::vector<std::string>& out) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_array()) return fail(key, "must be an array of strings, got " + json_input::dump(*v));
  std::vector<std::string> items;
  for (const auto& e : *v) {
    if (!e.is_string()) return fail(key, "must be an array of strings, got " + json_input::dump(e));
    items.push_back(e.get<std::string>());
  }
  out = std::move(items);
}

void config_reader::read(const char* key, std::string& out, const std::set<std::string>& allowed) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return;
  if (!v->is_string() || (!allowed.empty() && allowed.count(v->get<std::string>()) == 0)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    return fail(key, "must be one of " + list + ", got " + json_input::dump(*v));
  }
  out = v->get<std::string>();
}

void config_reader::finish() {
  if (!ok() || !obj_->is_object()) return;
  for (const auto& [key, value] : obj_->items()) {
    if (known_.count(key) == 0) {
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      return fail(key, "unknown key (known here: " + list + ")");
    }
  }
}

}  // namespace loopguard::sdk
