// The byte stream every connection of Loopguard speaks (the daemon's sessions and the clients':
// the SDK's daemon_client, `inspect`, `simulate`, `replay --daemon`): TCP, or TLS over TCP,
// chosen at run time (docs/operations.md, "TLS").
//
// Why one runtime type and not templates: the daemon's three sessions and the SDK client would
// each become a template over the stream (every member in a header, every session compiled
// twice) for a choice made once per process by a flag. Here the choice is one `if` per read or
// write, the sessions stay plain classes in .cpp files, and Beast's websocket::stream and
// http::async_read take this type like any other AsyncStream. Timeouts stay on the TCP layer
// (beast::tcp_stream's expires_after), which bounds the TLS handshake and the TLS records too.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "loopguard/status.hpp"

namespace loopguard::tls {

namespace ssl = boost::asio::ssl;
using error_code = boost::system::error_code;

class stream {
 public:
  using tcp_layer = boost::beast::tcp_stream;
  using tls_layer = ssl::stream<tcp_layer>;
  using executor_type = tcp_layer::executor_type;

  // Plain TCP.
  explicit stream(tcp_layer&& tcp) : s_(std::in_place_type<tcp_layer>, std::move(tcp)) {}
  // TLS over `tcp`; `ctx` must outlive the stream. Nothing is sent before handshake().
  stream(tcp_layer&& tcp, ssl::context& ctx)
      : s_(std::in_place_type<tls_layer>, std::move(tcp), ctx) {}
  // A client's: not connected yet; TLS when `ctx` is not null.
  template <class Executor>
  stream(const Executor& ex, ssl::context* ctx)
      : s_(ctx ? stream_variant(std::in_place_type<tls_layer>, ex, *ctx)
               : stream_variant(std::in_place_type<tcp_layer>, ex)) {}

  bool is_tls() const { return std::holds_alternative<tls_layer>(s_); }
  tls_layer* tls() { return std::get_if<tls_layer>(&s_); }
  // The TCP layer: connect, timeouts, close. beast::get_lowest_layer() finds it here.
  tcp_layer& next_layer() {
    if (auto* t = tls()) return t->next_layer();
    return std::get<tcp_layer>(s_);
  }
  executor_type get_executor() { return next_layer().get_executor(); }

  template <class MutableBufferSequence, class ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return boost::asio::async_initiate<ReadToken, void(error_code, std::size_t)>(
        [this](auto handler, const MutableBufferSequence& b) {
          if (auto* t = tls()) return t->async_read_some(b, std::move(handler));
          std::get<tcp_layer>(s_).async_read_some(b, std::move(handler));
        },
        token, buffers);
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return boost::asio::async_initiate<WriteToken, void(error_code, std::size_t)>(
        [this](auto handler, const ConstBufferSequence& b) {
          if (auto* t = tls()) return t->async_write_some(b, std::move(handler));
          std::get<tcp_layer>(s_).async_write_some(b, std::move(handler));
        },
        token, buffers);
  }

  // The TLS handshake; on a plain stream, completes at once with success.
  template <class Handler>
  void async_handshake(ssl::stream_base::handshake_type type, Handler&& handler) {
    if (auto* t = tls()) return t->async_handshake(type, std::forward<Handler>(handler));
    boost::asio::post(get_executor(),
                      [h = std::forward<Handler>(handler)]() mutable { h(error_code{}); });
  }

 private:
  using stream_variant = std::variant<tcp_layer, tls_layer>;
  stream_variant s_;
};

// Websocket close: TLS's close_notify first when there is TLS, then the TCP teardown. Found by
// argument-dependent lookup from Beast's websocket::stream.
inline void teardown(boost::beast::role_type role, stream& s, error_code& ec) {
  if (auto* t = s.tls()) return boost::beast::teardown(role, *t, ec);
  boost::beast::teardown(role, s.next_layer(), ec);
}

template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, stream& s, TeardownHandler&& handler) {
  if (auto* t = s.tls()) {
    return boost::beast::async_teardown(role, *t, std::forward<TeardownHandler>(handler));
  }
  boost::beast::async_teardown(role, s.next_layer(), std::forward<TeardownHandler>(handler));
}

// The daemon's context: the certificate chain and private key from PEM files, checked against
// each other. Errors name the file: "--tls-cert /x.pem: cannot read: No such file or directory".
result<std::shared_ptr<ssl::context>> server_context(const std::string& cert_file,
                                                     const std::string& key_file);

// A client's context: peers are verified against `ca_file` (PEM), or the system's CA paths
// when it is empty. An unreadable CA file is an error naming it.
result<std::shared_ptr<ssl::context>> client_context(const std::string& ca_file);

// Sets up `s` (TLS) to send `host` as SNI and to accept only a certificate for `host` (a DNS
// name or an IP address, checked against the subject alternative names).
status expect_host(stream::tls_layer& s, const std::string& host);

// Why a client's handshake failed, in words: a failed verification names OpenSSL's reason
// ("certificate verification failed for 127.0.0.1: self-signed certificate"); anything else
// is the error's own message. `verification` is set when the peer was not trusted.
std::string handshake_failure(stream::tls_layer& s, const error_code& ec, bool& verification);

}  // namespace loopguard::tls
