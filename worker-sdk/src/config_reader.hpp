// Walks a JSON object for parse_config(): typed fields with ranges, unknown keys refused, and the
// first error reported with its key path.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace loopguard::sdk {

class config_reader {
 public:
  // `obj` must outlive the reader. `path` is the key path of obj ("" at the top).
  config_reader(const nlohmann::json& obj, std::string path, std::string* error);

  bool ok() const { return error_->empty(); }
  const nlohmann::json* find(const char* key);  // marks the key as known
  config_reader child(const char* key);         // an object member (empty if absent)

  void read(const char* key, bool& out);
  void read(const char* key, std::uint32_t& out, std::uint32_t lo, std::uint32_t hi);
  void read(const char* key, std::uint64_t& out, std::uint64_t lo, std::uint64_t hi);
  void read(const char* key, double& out, double lo, double hi);
  void read(const char* key, std::vector<std::string>& out);
  void read(const char* key, std::string& out, const std::set<std::string>& allowed);

  // Reports keys that were never asked for. Call after reading every field.
  void finish();
  void fail(const std::string& key, const std::string& message);
  std::string key_path(const std::string& key) const;

 private:
  static const nlohmann::json& empty_object();
  const nlohmann::json* obj_;
  std::string path_;
  std::string* error_;
  std::set<std::string> known_;
};

}  // namespace loopguard::sdk
