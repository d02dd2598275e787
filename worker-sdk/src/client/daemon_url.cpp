#include "client/daemon_url.hpp"

#include <charconv>

namespace loopguard::client {
namespace {

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

status bad(std::string_view url, std::string_view why) {
  return status::error("expected ws://HOST:PORT[/PATH] or wss://HOST:PORT[/PATH], got \"" +
                       std::string(url) + "\": " + std::string(why));
}

result<std::string> check_port(std::string_view url, std::string_view port) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return bad(url, "the port must be a number in 1..65535");
  }
  return std::string(port);
}

}  // namespace

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c)) {
      out.push_back(ch);
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::string daemon_url::target(std::string_view swarm) const {
  return path + "?swarm=" + percent_encode(swarm);
}

result<daemon_url> parse_daemon_url(std::string_view url) {
  daemon_url out;
  std::string_view rest;
  if (url.starts_with("ws://")) {
    rest = url.substr(5);
  } else if (url.starts_with("wss://")) {
    rest = url.substr(6);
    out.tls = true;
  } else {
    return bad(url, "the scheme must be ws:// or wss://");
  }
  if (rest.find_first_of("?#@") != std::string_view::npos) {
    return bad(url, "no user info, query or fragment");
  }
  const auto slash = rest.find('/');
  out.path = slash == std::string_view::npos ? "/ws" : std::string(rest.substr(slash));
  if (out.path == "/") out.path = "/ws";
  const std::string_view authority = rest.substr(0, slash);
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos) return bad(url, "the port is missing");
  out.host = std::string(authority.substr(0, colon));
  if (out.host.starts_with('[') && out.host.ends_with(']')) {
    out.host = out.host.substr(1, out.host.size() - 2);  // [::1]
  }
  if (out.host.empty()) return bad(url, "the host is missing");
  auto port = check_port(url, authority.substr(colon + 1));
  if (!port) return port.error();
  out.port = std::move(*port);
  return out;
}

}  // namespace loopguard::client
