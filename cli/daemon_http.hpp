// One HTTP GET to a loopguardd's HTTP API (docs/operations.md, "Endpoints"), synchronous and
// bounded in time: for `loopguard inspect`. HTTP, or HTTPS with the certificate verified.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "loopguard/status.hpp"

namespace loopguard::cli {

struct http_address {
  std::string host, port;
  bool tls = false;               // https:// or wss://
  std::string authority() const;  // host:port, IPv6 hosts in brackets
};

// http://HOST:PORT or ws://HOST:PORT (what the other commands take; the same port serves both),
// or https:// / wss:// for a daemon serving TLS, with an optional trailing "/" (and "/ws" after
// ws:// or wss://). User info, other paths, queries, fragments and a port outside 1..65535 are
// refused.
result<http_address> parse_http_address(std::string_view url);

// `s` with every byte outside A-Z a-z 0-9 - . _ ~ written %XX: one path segment.
std::string percent_encode(std::string_view s);

struct http_answer {
  unsigned status = 0;
  std::string reason;  // the status line's reason phrase
  std::string body;
};

struct http_request {
  std::string target;   // e.g. /api/swarms
  std::string token;    // sent as "Authorization: Bearer <token>" when not empty
  std::string ca_file;  // TLS: the CA file to verify the daemon with; empty: the system's
  std::chrono::milliseconds timeout{10000};  // for the whole exchange
  std::size_t body_limit = std::size_t{64} << 20;
};

// Resolves, connects, sends the GET and reads the whole answer within the timeout. A failure
// to resolve, connect, send or read (refused, timed out, reset, an answer that is not HTTP or
// is larger than the limit) is an error whose message says which step failed and why, e.g.
// "connect: Connection refused" or "no answer within 10 s"; over TLS, a certificate the CA
// file (or the system) does not trust is "TLS handshake: certificate verification failed:
// self-signed certificate". Any status is an answer.
result<http_answer> http_get(const http_address& to, const http_request& request);

}  // namespace loopguard::cli
