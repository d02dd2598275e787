// The stream under a worker's WebSocket: the connection's tls::stream (TCP, or TLS over it)
// with a read buffer in front, so bytes that arrived in the same read as the HTTP upgrade
// request (a client may send its hello right behind the request) are read first instead of
// being lost; under TLS they are the decrypted bytes. Beast's websocket::stream finds the
// teardown of its next layer by argument-dependent lookup; these overloads pass it to the
// tls::stream (TLS close_notify when there is TLS, then the TCP teardown).
#pragma once

#include <boost/beast/core/buffered_read_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <utility>

#include "loopguard/tls_stream.hpp"

namespace loopguard::daemon {
using buffered_tcp_stream =
    boost::beast::buffered_read_stream<loopguard::tls::stream, boost::beast::flat_buffer>;
}  // namespace loopguard::daemon

namespace boost::beast {

inline void teardown(role_type role, loopguard::daemon::buffered_tcp_stream& s, error_code& ec) {
  loopguard::tls::teardown(role, s.next_layer(), ec);
}

template <class TeardownHandler>
void async_teardown(role_type role, loopguard::daemon::buffered_tcp_stream& s,
                    TeardownHandler&& handler) {
  loopguard::tls::async_teardown(role, s.next_layer(), std::forward<TeardownHandler>(handler));
}

}  // namespace boost::beast
