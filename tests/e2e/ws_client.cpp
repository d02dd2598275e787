#include "ws_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http.hpp>

namespace loopguard::test {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

ws_client::ws_client(unsigned short port, const std::string& target)
    : ws_client(port, target, {}) {}

ws_client::ws_client(unsigned short port, const std::string& target,
                     const std::vector<std::pair<std::string, std::string>>& headers)
    : ws_(ioc_) {
  beast::get_lowest_layer(ws_).connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true));
  ws_.set_option(
      beast::websocket::stream_base::decorator([headers](beast::websocket::request_type& req) {
        for (const auto& [name, value] : headers) req.set(name, value);
      }));
  ws_.handshake("127.0.0.1:" + std::to_string(port), target);
  do_read();
  thread_ = std::thread([this] { ioc_.run(); });
}

ws_client::~ws_client() {
  net::post(ioc_, [this] {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(ws_).close();
  });
  if (thread_.joinable()) thread_.join();
}

void ws_client::do_read() {
  ws_.async_read(buffer_, [this](beast::error_code ec, std::size_t) {
    std::lock_guard lock(mu_);
    if (ec) {
      closed_ = true;
      close_code_ = ws_.reason().code;
      cv_.notify_all();
      return;
    }
    auto j = nlohmann::json::parse(beast::buffers_to_string(buffer_.data()), nullptr, false);
    buffer_.consume(buffer_.size());
    if (j.is_object() && j.value("type", "") == "ack") {
      acked_ = std::max<std::uint64_t>(acked_, j.value("seq", std::uint64_t{0}));
    }
    all_.push_back(j);
    in_.push_back(std::move(j));
    cv_.notify_all();
    do_read();
  });
}

void ws_client::send(std::string frame, bool binary) {
  net::post(ioc_, [this, f = std::move(frame), binary]() mutable {
    out_.emplace_back(std::move(f), binary);
    if (!writing_) do_write();
  });
}

void ws_client::do_write() {
  if (out_.empty()) return;
  writing_ = true;
  ws_.binary(out_.front().second);
  ws_.async_write(net::buffer(out_.front().first), [this](beast::error_code ec, std::size_t) {
    writing_ = false;
    out_.pop_front();
    if (ec) {
      out_.clear();
      return;
    }
    do_write();
  });
}

std::optional<nlohmann::json> ws_client::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !in_.empty() || closed_; })) return std::nullopt;
  if (in_.empty()) return std::nullopt;
  auto j = std::move(in_.front());
  in_.pop_front();
  return j;
}

std::optional<nlohmann::json> ws_client::next_of(const std::string& type,
                                                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto j = next(left);
    if (!j) return std::nullopt;
    if (j->value("type", "") == type) return j;
  }
}

bool ws_client::wait_ack(std::uint64_t seq, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return acked_ >= seq || closed_; }) && acked_ >= seq;
}

std::uint64_t ws_client::last_ack() const {
  std::lock_guard lock(mu_);
  return acked_;
}

std::optional<int> ws_client::wait_closed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return closed_; })) return std::nullopt;
  return close_code_;
}

std::vector<nlohmann::json> ws_client::received(const std::string& type) const {
  std::lock_guard lock(mu_);
  std::vector<nlohmann::json> out;
  for (const auto& j : all_) {
    if (j.value("type", "") == type) out.push_back(j);
  }
  return out;
}

std::optional<std::uint64_t> ws_client::hello(const std::string& swarm, const std::string& worker,
                                              const std::string& incarnation,
                                              const std::string& token) {
  nlohmann::json h{{"type", "hello"},
                   {"version", 1},
                   {"swarm", swarm},
                   {"worker", worker},
                   {"incarnation", incarnation}};
  if (!token.empty()) h["token"] = token;
  send(h);
  auto w = next_of("welcome", std::chrono::seconds(5));
  if (!w) return std::nullopt;
  return (*w)["last_ack"].get<std::uint64_t>();
}

int http_get(unsigned short port, const std::string& target, std::string& body) {
  namespace http = beast::http;
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  body = res.body();
  return static_cast<int>(res.result_int());
}

}  // namespace loopguard::test

namespace loopguard::test {

int try_upgrade(unsigned short port, const std::string& target, std::string& body) {
  return try_upgrade(port, target, {}, body);
}

}  // namespace loopguard::test

namespace loopguard::test {

std::string http_answer::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (beast::iequals(n, name)) return v;
  }
  return {};
}

http_answer http_request(unsigned short port, const std::string& method, const std::string& target,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         const std::string& body) {
  namespace http = beast::http;
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  stream.expires_after(std::chrono::seconds(10));
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  http_answer a;
  a.status = static_cast<int>(res.result_int());
  a.body = res.body();
  for (const auto& f : res)
    a.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  return a;
}

int try_upgrade(unsigned short port, const std::string& target,
                const std::vector<std::pair<std::string, std::string>>& headers,
                std::string& body) {
  net::io_context ioc;
  beast::websocket::stream<beast::tcp_stream> ws(ioc);
  beast::get_lowest_layer(ws).connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(10));
  ws.set_option(
      beast::websocket::stream_base::decorator([headers](beast::websocket::request_type& req) {
        for (const auto& [name, value] : headers) req.set(name, value);
      }));
  beast::websocket::response_type res;
  beast::error_code ec;
  ws.handshake(res, "127.0.0.1:" + std::to_string(port), target, ec);
  body = res.body();
  beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ec);
  return static_cast<int>(res.result_int());
}

}  // namespace loopguard::test
