// tls::stream on its own (shared/include/loopguard/tls_stream.hpp), plain and TLS, over a
// loopback connection: the composed operations above it (asio::async_write, async_read) move
// every byte of a write of more buffers than it gathers at once (some empty) and of a read into
// several buffers, in order; the handshake and the teardown complete on both kinds.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "../daemon/test_util.hpp"
#include "loopguard/tls_stream.hpp"
#include "test_certificate.hpp"

using namespace loopguard;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// 40 pieces of different lengths, every fifth one empty, as one buffer sequence.
struct pieces {
  pieces() {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      parts[i] =
          i % 5 == 0 ? std::string() : std::string(1 + i * 37, static_cast<char>('a' + i % 26));
      all += parts[i];
      buffers[i] = net::buffer(parts[i]);
    }
  }
  std::array<std::string, 40> parts;
  std::array<net::const_buffer, 40> buffers;
  std::string all;
};

// A connected pair of streams, TLS when `ctx` (the server's) and `client_ctx` are given.
struct stream_pair {
  using beast_tcp = tls::stream::tcp_layer;
  stream_pair(net::io_context& ioc, net::ssl::context* server_ctx, net::ssl::context* client_ctx)
      : acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)),
        client(ioc.get_executor(), client_ctx) {
    client.next_layer().connect(acceptor.local_endpoint());
    tcp::socket accepted = acceptor.accept();
    beast_tcp tcp_layer(std::move(accepted));
    if (server_ctx) {
      server.emplace(std::move(tcp_layer), *server_ctx);
    } else {
      server.emplace(std::move(tcp_layer));
    }
  }
  tcp::acceptor acceptor;
  tls::stream client;
  std::optional<tls::stream> server;
};

// Handshakes both ends, writes `p` from the client, reads it at the server into three buffers,
// then closes both ends with the websocket teardown. Everything on `ioc`, bounded.
void round_trip(net::io_context& ioc, stream_pair& s, const pieces& p) {
  int handshakes = 0;
  s.client.async_handshake(net::ssl::stream_base::client, [&](error_code ec) {
    CHECK_MESSAGE(!ec, ec.message());
    ++handshakes;
  });
  s.server->async_handshake(net::ssl::stream_base::server, [&](error_code ec) {
    CHECK_MESSAGE(!ec, ec.message());
    ++handshakes;
  });
  ioc.run_for(std::chrono::seconds(10));
  REQUIRE(handshakes == 2);
  ioc.restart();

  std::size_t written = 0;
  net::async_write(s.client, p.buffers, [&](error_code ec, std::size_t n) {
    CHECK_MESSAGE(!ec, ec.message());
    written = n;
  });
  std::string a(100, '\0'), b(1, '\0'), c(p.all.size() - 101, '\0');
  const std::array<net::mutable_buffer, 3> into{net::buffer(a), net::buffer(b), net::buffer(c)};
  std::size_t read = 0;
  net::async_read(*s.server, into, [&](error_code ec, std::size_t n) {
    CHECK_MESSAGE(!ec, ec.message());
    read = n;
  });
  ioc.run_for(std::chrono::seconds(10));
  CHECK(written == p.all.size());
  REQUIRE(read == p.all.size());
  CHECK(a + b + c == p.all);
  ioc.restart();

  int torn_down = 0;  // both ends at once: each waits for the other's close
  const auto done = [&](error_code) { ++torn_down; };
  tls::async_teardown(boost::beast::role_type::client, s.client, done);
  tls::async_teardown(boost::beast::role_type::server, *s.server, done);
  ioc.run_for(std::chrono::seconds(10));
  CHECK(torn_down == 2);
}

}  // namespace

TEST_CASE("tls::stream: plain TCP moves every byte of gathered writes and scattered reads") {
  net::io_context ioc;
  stream_pair s(ioc, nullptr, nullptr);
  CHECK_FALSE(s.client.is_tls());
  const pieces p;
  REQUIRE(p.all.size() > 101);
  round_trip(ioc, s, p);
}

TEST_CASE("tls::stream: TLS moves every byte of gathered writes and scattered reads") {
  test::temp_dir dir;
  const std::string cert = dir.file("cert.pem"), key = dir.file("key.pem");
  test::write_self_signed(cert, key, "localhost", "IP:127.0.0.1");
  auto server_ctx = tls::server_context(cert, key);
  REQUIRE(server_ctx.has_value());
  auto client_ctx = tls::client_context(cert);
  REQUIRE(client_ctx.has_value());
  net::io_context ioc;
  stream_pair s(ioc, server_ctx->get(), client_ctx->get());
  REQUIRE(s.client.is_tls());
  REQUIRE(tls::expect_host(*s.client.tls(), "127.0.0.1").ok());
  const pieces p;
  round_trip(ioc, s, p);
}
