// Who may read the daemon over HTTP (docs/operations.md, "Access"). With no token configured
// everyone on the (loopback by default) port may. With tokens, a request needs either the
// header `Authorization: Bearer <admin token>` (scripts, `loopguard inspect`) or the session cookie
// a browser got from POST /api/login (a browser cannot put a header on a WebSocket or an
// EventSource, so the dashboard exchanges the token once for an HttpOnly, SameSite=Strict
// cookie). Only admin tokens open the API: a worker's token grants its swarms over /ws, never
// another swarm's state. /metrics has a token of its own when one is configured. Tokens are
// compared in constant time and never logged. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "loopguard/status.hpp"
#include "server/token_table.hpp"

namespace loopguard::daemon {

inline constexpr std::string_view kSessionCookie = "loopguard_session";

// The value of cookie `name` in a Cookie header (`a=1; loopguard_session=x`), if present.
std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name);

// Whether a Host header names this machine by address: an IP literal (`127.0.0.1:7070`,
// `[::1]:7070`) or `localhost`, with or without a port. A name could be an attacker's domain
// rebound to the daemon's address (DNS rebinding), so a daemon without a token answers pages only
// when they address it this way.
bool local_host(std::string_view host);

// The token of `Authorization: Bearer <token>`, if the header has that form.
std::optional<std::string_view> bearer_token(std::string_view header);

class access_control {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr std::chrono::hours kSessionLifetime{12};
  static constexpr std::size_t kMaxSessions = 1024;  // the oldest goes first beyond this

  // refused: no credentials or wrong ones; worker: a worker's token, which the API does not take.
  enum class grant { refused, worker, open, bearer, cookie };
  static bool admits(grant g) { return g != grant::refused && g != grant::worker; }

  // Before any request is served.
  void configure(token_table tokens, std::string metrics_token) {
    tokens_ = std::move(tokens);
    metrics_token_ = std::move(metrics_token);
  }

  // Whether reading needs credentials (tokens are configured).
  bool required() const { return !tokens_.empty(); }
  const token_table& tokens() const { return tokens_; }
  // May a request with these Authorization and Cookie headers read the API?
  grant check(std::string_view authorization, std::string_view cookie, clock::time_point now);
  // May it read /metrics? Open unless a metrics token is configured; then its bearer only.
  bool metrics_allowed(std::string_view authorization) const;

  // A new session id for an admin token; with no token configured, an empty string (no cookie
  // needed). Errors: code `unauthorized` for a wrong token, `forbidden` for a worker's.
  result<std::string> login(std::string_view token, clock::time_point now);
  void logout(std::string_view cookie);

  // The Set-Cookie value for a session id (empty id: the cookie cleared).
  static std::string set_cookie(std::string_view id);

 private:
  token_table tokens_;
  std::string metrics_token_;
  std::mutex mu_;                                                   // guards sessions_
  std::map<std::string, clock::time_point, std::less<>> sessions_;  // id → expiry
};

}  // namespace loopguard::daemon
