#include "daemon_http.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "loopguard/tls_stream.hpp"

namespace loopguard::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

status bad_url(std::string_view url, std::string_view why) {
  return status::error("expected http(s)://HOST:PORT, got \"" + std::string(url) +
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
  exchange(asio::io_context& ioc, const http_address& to, const http_request& rq,
           asio::ssl::context* tls_context)
      : resolver_(ioc),
        stream_(ioc.get_executor(), tls_context),
        to_(to),
        deadline_(clock_type::now() + rq.timeout) {
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
    if (ec_) return status::error(step_ + ": " + (why_.empty() ? ec_.message() : why_));
    auto& res = parser_.get();
    return http_answer{res.result_int(), std::string(res.reason()), std::move(res.body())};
  }
  void cancel() {
    timed_out_ = true;
    resolver_.cancel();
    stream_.next_layer().cancel();
  }

 private:
  void fail(beast::error_code ec, std::string why = {}) {
    done_ = true;
    ec_ = ec;
    why_ = std::move(why);
  }
  void on_resolve(beast::error_code ec, const tcp::resolver::results_type& results) {
    if (ec) return fail(ec);
    step_ = "connect";
    stream_.next_layer().expires_at(deadline_);
    stream_.next_layer().async_connect(
        results, [this](beast::error_code e, const tcp::endpoint&) { on_connect(e); });
  }
  void on_connect(beast::error_code ec) {
    if (ec) return fail(ec);
    auto* secure = stream_.tls();
    if (secure == nullptr) return send();
    step_ = "TLS handshake";
    if (status s = tls::expect_host(*secure, to_.host); !s.ok()) {
      return fail(beast::error_code(asio::error::invalid_argument), s.message());
    }
    stream_.async_handshake(asio::ssl::stream_base::client, [this, secure](beast::error_code e) {
      if (!e) return send();
      bool verification = false;
      fail(e, tls::handshake_failure(*secure, e, verification));
    });
  }
  void send() {
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
  tls::stream stream_;
  const http_address& to_;
  clock_type::time_point deadline_;
  http::request<http::empty_body> request_;
  http::response_parser<http::string_body> parser_;
  beast::flat_buffer buffer_;
  std::string step_ = "resolve";
  std::string why_;  // the failure in words when ec_'s message is not enough (TLS)
  bool done_ = false, timed_out_ = false;
  beast::error_code ec_;
};

}  // namespace

std::string http_address::authority() const {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + port : host + ":" + port;
}

result<http_address> parse_http_address(std::string_view url) {
  std::string_view rest;
  bool ws = false, tls = false;
  for (const auto& [scheme, is_ws, is_tls] :
       {std::tuple<std::string_view, bool, bool>{"http://", false, false},
        {"https://", false, true},
        {"ws://", true, false},
        {"wss://", true, true}}) {
    if (url.starts_with(scheme)) {
      rest = url.substr(scheme.size());
      ws = is_ws;
      tls = is_tls;
      break;
    }
  }
  if (rest.data() == nullptr) {
    return bad_url(url, "the scheme must be http:// or https:// (or ws://, wss://)");
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
  out.tls = tls;
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
  std::shared_ptr<asio::ssl::context> tls_context;
  if (to.tls) {
    auto ctx = tls::client_context(request.ca_file);
    if (!ctx) return ctx.error().with_context("TLS: ");
    tls_context = std::move(*ctx);
  }
  asio::io_context ioc;
  exchange x(ioc, to, request, tls_context.get());
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
