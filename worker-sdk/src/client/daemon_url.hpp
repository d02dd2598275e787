// The daemon's address as a client dials it: ws://HOST:PORT[/PATH], or wss:// for TLS (the
// certificate verified for HOST, docs/sdk.md "TLS"); the path defaults to /ws
// and the swarm goes in the query (?swarm=S, percent-encoded), so a proxy can route a swarm to
// one daemon without reading frames (docs/protocol.md, "Connecting").
#pragma once

#include <string>
#include <string_view>

#include "loopguard/status.hpp"

namespace loopguard::client {

struct daemon_url {
  std::string host, port, path;  // path: "/ws" when the URL has none
  bool tls = false;              // wss://
  // The request target for `swarm`: path?swarm=<percent-encoded swarm>.
  std::string target(std::string_view swarm) const;
  std::string host_header() const { return host + ":" + port; }
};

// User info, queries and fragments are refused, and so is a missing or out-of-range port.
result<daemon_url> parse_daemon_url(std::string_view url);

std::string percent_encode(std::string_view s);

}  // namespace loopguard::client
