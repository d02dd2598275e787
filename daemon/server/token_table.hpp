// Who may do what (docs/operations.md, "Access"): the tokens a daemon accepts and what each
// grants. A worker's token grants the swarms whose ids match one of its patterns, optionally
// only some worker names, and optionally the right to end a swarm (swarm_complete); an admin
// token grants everything, and is the only kind the HTTP API and the dashboard accept.
//
// The tokens file has one token per line, then its grants, separated by spaces:
//
//   # comment
//   9f2c0d...  admin  name=ops
//   5b7a1e...  swarm=nightly-*  complete
//   77d14a...  swarm=refactor-auth  worker=w1  worker=w2
//
// A pattern is a swarm id in which `*` stands for any run of characters (`nightly-*`, `*`). A
// line whose first word starts with `#` is a comment, so no token starts with `#`.
// Tokens are looked up in constant time and never appear in an error or a log line: a grant is
// named by its `name=` or, without one, by its line (`tokens:3`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loopguard/status.hpp"

namespace loopguard::daemon {

// Equal without a timing difference that depends on where the bytes differ.
bool same_secret(std::string_view a, std::string_view b);

// Whether `id` matches `pattern`, where each `*` matches any run of characters (also none).
bool glob_match(std::string_view pattern, std::string_view id);

struct token_grant {
  static constexpr std::size_t kMinTokenLength = 16;
  std::string token;
  std::string name;                  // for logs and errors: name= or `FILE:LINE`
  std::vector<std::string> swarms;   // patterns; an admin needs none
  std::vector<std::string> workers;  // empty: any worker name
  bool complete = false;             // may send swarm_complete
  bool admin = false;                // everything, and the HTTP API and dashboard

  bool grants_swarm(std::string_view swarm) const;
  bool grants_worker(std::string_view worker) const;
  bool may_complete() const { return admin || complete; }
};

class token_table {
 public:
  // Parses a tokens file's text; errors name `file:line` and never hold a token.
  static result<token_table> parse(std::string_view text, std::string_view file);
  // A table of one admin token (the single-token file, `token_file`).
  static token_table single_admin(std::string token);

  // Nothing configured: no hello or request needs a token.
  bool empty() const { return grants_.empty(); }
  std::size_t size() const { return grants_.size(); }
  // The grant of `token`, or nullptr. Every entry is compared (no early exit), each in constant
  // time, so the time taken says nothing about which bytes or which entry matched.
  const token_grant* find(std::string_view token) const;
  // Merges `other`'s grants in; an error if a token appears in both.
  status add(token_table other);

 private:
  std::vector<token_grant> grants_;
};

}  // namespace loopguard::daemon
