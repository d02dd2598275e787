#include "server/access_control.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>

#include <boost/asio/ip/address.hpp>

#include "loopguard/hex.hpp"

namespace loopguard::daemon {

std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const auto semi = header.find(';');
    std::string_view pair = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
  }
  return std::nullopt;
}

bool local_host(std::string_view host) {
  std::string_view name = host;
  if (name.starts_with('[')) {
    const auto close = name.find(']');
    if (close == std::string_view::npos) return false;
    const auto rest = name.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return false;
    name = name.substr(1, close - 1);
  } else if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    if (name.find(':', colon + 1) != std::string_view::npos) return false;
    name = name.substr(0, colon);
  }
  if (name.empty()) return false;
  std::string lower(name);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "localhost") return true;
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(lower, ec);
  return !ec;
}

std::optional<std::string_view> bearer_token(std::string_view header) {
  constexpr std::string_view kScheme = "Bearer ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  // The scheme is case-insensitive (RFC 9110, 11.1).
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return std::nullopt;
    }
  }
  return header.substr(kScheme.size());
}

access_control::grant access_control::check(std::string_view authorization, std::string_view cookie,
                                            clock::time_point now) {
  if (!required()) return grant::open;
  if (const auto t = bearer_token(authorization)) {
    if (const auto* g = tokens_.find(*t)) return g->admin ? grant::bearer : grant::worker;
  }
  const auto id = cookie_value(cookie, kSessionCookie);
  if (!id) return grant::refused;
  std::lock_guard lock(mu_);
  const auto it = sessions_.find(*id);
  if (it == sessions_.end()) return grant::refused;
  if (it->second <= now) {
    sessions_.erase(it);
    return grant::refused;
  }
  return grant::cookie;
}

bool access_control::metrics_allowed(std::string_view authorization) const {
  if (metrics_token_.empty()) return true;
  const auto t = bearer_token(authorization);
  return t && same_secret(*t, metrics_token_);
}

result<std::string> access_control::login(std::string_view token, clock::time_point now) {
  if (!required()) return std::string();
  const auto* g = tokens_.find(token);
  if (g == nullptr) return status::error("unauthorized", "wrong token");
  if (!g->admin) {
    return status::error("forbidden",
                         "this is a worker's token: the API and the dashboard take an admin token");
  }
  std::random_device rd;  // getrandom(2) on Linux
  std::string id;         // 256 random bits, hex
  for (int i = 0; i < 4; ++i) {
    id += to_hex((static_cast<std::uint64_t>(rd()) << 32) | static_cast<std::uint64_t>(rd()));
  }
  std::lock_guard lock(mu_);
  std::erase_if(sessions_, [now](const auto& s) { return s.second <= now; });
  if (sessions_.size() >= kMaxSessions) {
    sessions_.erase(
        std::min_element(sessions_.begin(), sessions_.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; }));
  }
  sessions_.emplace(id, now + kSessionLifetime);
  return id;
}

void access_control::logout(std::string_view cookie) {
  const auto id = cookie_value(cookie, kSessionCookie);
  if (!id) return;
  std::lock_guard lock(mu_);
  if (const auto it = sessions_.find(*id); it != sessions_.end()) sessions_.erase(it);
}

std::string access_control::set_cookie(std::string_view id) {
  const auto age = id.empty() ? std::string("0")
                              : std::to_string(std::chrono::seconds(kSessionLifetime).count());
  return std::string(kSessionCookie) + "=" + std::string(id) +
         "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + age;
}

}  // namespace loopguard::daemon
