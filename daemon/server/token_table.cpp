#include "server/token_table.hpp"

#include <algorithm>

#include "loopguard/utf8.hpp"

namespace loopguard::daemon {

namespace {

constexpr std::size_t kMaxIdentifier = 128;  // the protocol's limit on swarm and worker ids

// The line's words, split on spaces and tabs.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// A swarm pattern or worker name: what a hello could carry.
status check_identifier(std::string_view key, std::string_view value) {
  if (value.empty()) return status::error(std::string(key) + "= needs a value");
  if (value.size() > kMaxIdentifier) {
    return status::error(std::string(key) + "= is longer than " + std::to_string(kMaxIdentifier) +
                         " bytes");
  }
  if (!utf8::is_identifier(value)) {
    return status::error(std::string(key) + "= is not valid UTF-8");
  }
  return {};
}

// One line's grants (everything after the token).
status read_grants(const std::vector<std::string_view>& words, token_grant& g) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    const auto w = words[i];
    const auto eq = w.find('=');
    const auto key = w.substr(0, eq);
    const auto value = eq == std::string_view::npos ? std::string_view{} : w.substr(eq + 1);
    if (w == "admin") {
      g.admin = true;
    } else if (w == "complete") {
      g.complete = true;
    } else if (eq != std::string_view::npos && key == "swarm") {
      if (auto s = check_identifier(key, value); !s.ok()) return s;
      g.swarms.emplace_back(value);
    } else if (eq != std::string_view::npos && key == "worker") {
      if (auto s = check_identifier(key, value); !s.ok()) return s;
      g.workers.emplace_back(value);
    } else if (eq != std::string_view::npos && key == "name") {
      if (auto s = check_identifier(key, value); !s.ok()) return s;
      g.name = value;
    } else {
      // Only a short lowercase key is shown: the word could be a second token on the line.
      const bool plain_key = eq != std::string_view::npos && !key.empty() && key.size() <= 12 &&
                             std::all_of(key.begin(), key.end(),
                                         [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
      const std::string what = plain_key ? "unknown grant \"" + std::string(key) + "=...\""
                                         : "word " + std::to_string(i + 1) +
                                               " is not a grant (it is not shown: it could be "
                                               "a token)";
      return status::error(what +
                           " (known: swarm=PATTERN, worker=NAME, complete, admin, name=LABEL)");
    }
  }
  if (!g.admin && g.swarms.empty()) {
    return status::error("the token grants nothing: give swarm=PATTERN or admin");
  }
  if (g.admin && (!g.swarms.empty() || !g.workers.empty())) {
    return status::error("an admin token grants every swarm and worker: drop swarm= and worker=");
  }
  return {};
}

}  // namespace

bool same_secret(std::string_view a, std::string_view b) {
  // The length is not secret; the bytes are compared all the way through.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

bool glob_match(std::string_view pattern, std::string_view id) {
  // Greedy with one backtrack point: the last `*` seen absorbs one more character on a mismatch.
  std::size_t p = 0, s = 0, star = std::string_view::npos, mark = 0;
  while (s < id.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = s;
    } else if (p < pattern.size() && pattern[p] == id[s]) {
      ++p;
      ++s;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool token_grant::grants_swarm(std::string_view swarm) const {
  return admin || std::any_of(swarms.begin(), swarms.end(),
                              [swarm](const std::string& p) { return glob_match(p, swarm); });
}

bool token_grant::grants_worker(std::string_view worker) const {
  return workers.empty() || std::find(workers.begin(), workers.end(), worker) != workers.end();
}

result<token_table> token_table::parse(std::string_view text, std::string_view file) {
  token_table t;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.ends_with('\r')) line.remove_suffix(1);
    const auto where = std::string(file) + ":" + std::to_string(line_no) + ": ";
    const auto words = words_of(line);
    if (words.empty() || words.front().starts_with('#')) continue;
    token_grant g;
    g.token = words.front();
    if (!printable_ascii(g.token)) {
      return status::error(where + "a token is printable ASCII without spaces");
    }
    if (g.token.size() < token_grant::kMinTokenLength) {
      return status::error(where + "the token is shorter than " +
                           std::to_string(token_grant::kMinTokenLength) +
                           " characters (make one with: openssl rand -hex 32)");
    }
    if (auto s = read_grants(words, g); !s.ok()) return s.with_context(where);
    if (g.name.empty()) g.name = std::string(file) + ":" + std::to_string(line_no);
    if (const auto* seen = t.find(g.token)) {
      return status::error(where + "the same token is already on the line of \"" + seen->name +
                           "\"");
    }
    t.grants_.push_back(std::move(g));
  }
  if (t.empty()) return status::error(std::string(file) + ": the tokens file holds no token");
  return t;
}

token_table token_table::single_admin(std::string token) {
  token_table t;
  token_grant g;
  g.token = std::move(token);
  g.name = "token_file";
  g.admin = true;
  t.grants_.push_back(std::move(g));
  return t;
}

const token_grant* token_table::find(std::string_view token) const {
  const token_grant* found = nullptr;
  for (const auto& g : grants_) {
    if (same_secret(token, g.token)) found = &g;
  }
  return found;
}

status token_table::add(token_table other) {
  for (auto& g : other.grants_) {
    if (const auto* seen = find(g.token)) {
      return status::error("the token of \"" + g.name + "\" is also the one of \"" + seen->name +
                           "\"");
    }
    grants_.push_back(std::move(g));
  }
  return {};
}

}  // namespace loopguard::daemon
