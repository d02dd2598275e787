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

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <array>
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
        [this](io_handler handler, const MutableBufferSequence& b) {
          start_read(first_buffer(b), std::move(handler));
        },
        token, buffers);
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return boost::asio::async_initiate<WriteToken, void(error_code, std::size_t)>(
        [this](io_handler handler, const ConstBufferSequence& b) {
          start_write(gather(b), std::move(handler));
        },
        token, buffers);
  }

  // The TLS handshake; on a plain stream, completes at once with success.
  template <class HandshakeToken>
  auto async_handshake(ssl::stream_base::handshake_type type, HandshakeToken&& token) {
    return boost::asio::async_initiate<HandshakeToken, void(error_code)>(
        [this](done_handler handler, ssl::stream_base::handshake_type t) {
          start_handshake(t, std::move(handler));
        },
        token, type);
  }

  using io_handler = boost::asio::any_completion_handler<void(error_code, std::size_t)>;
  using done_handler = boost::asio::any_completion_handler<void(error_code)>;

 private:
  // Up to kMaxGather buffers of a write, in order (a write may write fewer bytes than asked:
  // the composed writes above it loop). TLS writes the first one only, as Asio's ssl::stream
  // always does.
  static constexpr std::size_t kMaxGather = 16;
  struct gathered {
    std::array<boost::asio::const_buffer, kMaxGather> buffers;
    std::size_t count = 0;
    const boost::asio::const_buffer* begin() const { return buffers.data(); }
    const boost::asio::const_buffer* end() const { return buffers.data() + count; }
  };

  // The I/O below the templates: the handler is type-erased, so TLS's and TCP's operations are
  // compiled once, in tls_stream.cpp, not once per handler type of every caller (Beast's
  // websocket makes dozens; they made each session's translation unit minutes long under the
  // sanitizers).
  void start_read(boost::asio::mutable_buffer buffer, io_handler handler);
  void start_write(const gathered& buffers, io_handler handler);
  void start_handshake(ssl::stream_base::handshake_type type, done_handler handler);

  // The first non-empty buffer (a read may fill fewer bytes than asked), or an empty one.
  template <class Sequence>
  static boost::asio::mutable_buffer first_buffer(const Sequence& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b(*it);
      if (b.size() != 0) return b;
    }
    return {};
  }
  template <class Sequence>
  static gathered gather(const Sequence& buffers) {
    gathered out;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && out.count < kMaxGather; ++it) {
      boost::asio::const_buffer b(*it);
      if (b.size() != 0) out.buffers[out.count++] = b;
    }
    return out;
  }

  using stream_variant = std::variant<tcp_layer, tls_layer>;
  stream_variant s_;
};

// Websocket close: TLS's close_notify first when there is TLS, then the TCP teardown. Found by
// argument-dependent lookup from Beast's websocket::stream.
inline void teardown(boost::beast::role_type role, stream& s, error_code& ec) {
  if (auto* t = s.tls()) return boost::beast::teardown(role, *t, ec);
  boost::beast::teardown(role, s.next_layer(), ec);
}

void async_teardown(boost::beast::role_type role, stream& s, stream::done_handler handler);
template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, stream& s, TeardownHandler&& handler) {
  async_teardown(role, s, stream::done_handler(std::forward<TeardownHandler>(handler)));
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
