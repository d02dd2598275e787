#include "daemon_http.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace loopguard::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

status bad_url(std::string_view url, std::string_view why) {
  return status::error("expected http://HOST:PORT, got \"" + std::string(url) +
                       "\": " + std::string(why));
}

std::string seconds_text(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(d.count()) / 1000);
  return text;
}

// One GET, as Beast's examples lay out a client: each step's handler starts the next; the
// first failure ends the exchange and names the step. Runs on the caller's io_context.
class exchange {
 public:
  exchange(asio::io_context& ioc, const http_address& to, const http_request& rq)
      : resolver_(ioc), stream_(ioc), to_(to), deadline_(clock_type::now() + rq.timeout) {
    request_ = {http::verb::get, rq.target, 11};
    request_.set(http::field::host, to.authority());
    request_.set(http::field::user_agent, "loopguard/" LOOPGUARD_VERSION);
    request_.set(http::field::accept, "application/json");
    if (!rq.token.empty()) request_.set(http::field::authorization, "Bearer " + rq.token);
    parser_.body_limit(rq.body_limit);
  }

  void start() {
    resolver_.async_resolve(to_.host, to_.port, [this](beast::error_code ec, auto results) {
      on_resolve(ec, std::move(results));
    });
  }
  // After the io_context stopped: the answer, or why there is none.
  result<http_answer> outcome(std::chrono::milliseconds timeout) {
    if (timed_out_ || !done_ || ec_ == beast::error::timeout) {
      return status::error(step_ + ": no answer within " + seconds_text(timeout));
    }
    if (ec_) return status::error(step_ + ": " + ec_.message());
    auto& res = parser_.get();
    return http_answer{res.result_int(), std::string(res.reason()), std::move(res.body())};
  }
  void cancel() {
    timed_out_ = true;
    resolver_.cancel();
    stream_.cancel();
  }

 private:
  void fail(beast::error_code ec) {
    done_ = true;
    ec_ = ec;
  }
  void on_resolve(beast::error_code ec, const tcp::resolver::results_type& results) {
    if (ec) return fail(ec);
    step_ = "connect";
    stream_.expires_at(deadline_);
    stream_.async_connect(results,
                          [this](beast::error_code e, const tcp::endpoint&) { on_connect(e); });
  }
  void on_connect(beast::error_code ec) {
    if (ec) return fail(ec);
    step_ = "send";
    http::async_write(stream_, request_, [this](beast::error_code e, std::size_t) { on_write(e); });
  }
  void on_write(beast::error_code ec) {
    if (ec) return fail(ec);
    step_ = "read";
    http::async_read(stream_, buffer_, parser_,
                     [this](beast::error_code e, std::size_t) { fail(e); });
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  const http_address& to_;
  clock_type::time_point deadline_;
  http::request<http::empty_body> request_;
  http::response_parser<http::string_body> parser_;
  beast::flat_buffer buffer_;
  std::string step_ = "resolve";
  bool done_ = false, timed_out_ = false;
  beast::error_code ec_;
};

}  // namespace

std::string http_address::authority() const {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + port : host + ":" + port;
}

result<http_address> parse_http_address(std::string_view url) {
  if (url.starts_with("https://") || url.starts_with("wss://")) {
    return bad_url(url, "TLS (https://, wss://) is not supported yet");
  }
  std::string_view rest;
  bool ws = false;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("ws://")) {
    rest = url.substr(5);
    ws = true;
  } else {
    return bad_url(url, "the scheme must be http:// (or ws://)");
  }
  const auto slash = rest.find('/');
  const std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (!path.empty() && path != "/" && !(ws && (path == "/ws" || path == "/ws/"))) {
    return bad_url(url, "no path: the API is at the daemon's root");
  }
  const std::string_view authority = rest.substr(0, slash);
  if (authority.find_first_of("?#@") != std::string_view::npos) {
    return bad_url(url, "no user info, query or fragment");
  }
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos) return bad_url(url, "the port is missing");
  http_address out;
  std::string_view host = authority.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::1]
  }
  if (host.empty()) return bad_url(url, "the host is missing");
  const std::string_view port = authority.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return bad_url(url, "the port must be a number in 1..65535");
  }
  out.host = std::string(host);
  out.port = std::string(port);
  return out;
}

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(ch);
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

result<http_answer> http_get(const http_address& to, const http_request& request) {
  asio::io_context ioc;
  exchange x(ioc, to, request);
  x.start();
  // The stream's own timer bounds connect, send and read; this bounds name resolution too.
  ioc.run_for(request.timeout + std::chrono::milliseconds(100));
  if (!ioc.stopped()) {
    x.cancel();
    ioc.restart();
    ioc.run();  // let the cancelled handlers finish before the exchange goes
  }
  return x.outcome(request.timeout);
}

}  // namespace loopguard::cli
