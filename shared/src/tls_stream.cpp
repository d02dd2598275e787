#include "loopguard/tls_stream.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace loopguard::tls {
namespace {

// The failure in OpenSSL's words ("PEM lib", "key values mismatch"); Asio took the first
// error of the thread's queue into `ec`, the rest is dropped.
std::string openssl_reason(const error_code& ec) {
  ERR_clear_error();
  return "OpenSSL: " + ec.message();
}

// A file that is missing or unreadable is named as such, before OpenSSL's vaguer words.
status readable(const char* what, const std::string& file) {
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (file.empty() || !in) {
    return status::error(std::string(what) + " " + file + ": cannot read the file" +
                         (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
  return {};
}

}  // namespace

result<std::shared_ptr<ssl::context>> server_context(const std::string& cert_file,
                                                     const std::string& key_file) {
  if (status s = readable("--tls-cert", cert_file); !s.ok()) return s;
  if (status s = readable("--tls-key", key_file); !s.ok()) return s;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  error_code ec;
  ERR_clear_error();
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return status::error("--tls-cert " + cert_file +
                         ": not a PEM certificate chain: " + openssl_reason(ec));
  }
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  // Asio took OpenSSL's first error into ec.
  if (ec && ec.category() == boost::asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH) {
    ERR_clear_error();
    return status::error("--tls-key " + key_file +
                         " does not match the certificate in --tls-cert " + cert_file);
  }
  if (ec) {
    return status::error("--tls-key " + key_file +
                         ": not a PEM private key: " + openssl_reason(ec));
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return status::error("--tls-key " + key_file +
                         " does not match the certificate in --tls-cert " + cert_file);
  }
  return ctx;
}

result<std::shared_ptr<ssl::context>> client_context(const std::string& ca_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx->set_verify_mode(ssl::verify_peer);
  error_code ec;
  ERR_clear_error();
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) return status::error("the system's CA certificates: " + openssl_reason(ec));
    return ctx;
  }
  if (status s = readable("CA file", ca_file); !s.ok()) return s;
  ctx->load_verify_file(ca_file, ec);
  if (ec) {
    return status::error("CA file " + ca_file +
                         ": no PEM certificate in it: " + openssl_reason(ec));
  }
  return ctx;
}

status expect_host(stream::tls_layer& s, const std::string& host) {
  SSL* ssl = s.native_handle();
  // SNI is for names only (RFC 6066): an IP address is not sent.
  error_code ec;
  const auto ip = boost::asio::ip::make_address(host, ec);
  // SSL_set_tlsext_host_name, without the macro's C cast.
  if (ec && SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                     const_cast<char*>(host.c_str())) != 1) {
    ERR_clear_error();
    return status::error("TLS: cannot set the server name " + host);
  }
  // SSL_set1_host checks a DNS name; an IP address is checked against the IP SANs instead.
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  const int ok = ec ? SSL_set1_host(ssl, host.c_str())
                    : X509_VERIFY_PARAM_set1_ip_asc(param, ip.to_string().c_str());
  if (ok != 1) {
    ERR_clear_error();
    return status::error("TLS: cannot verify against the host " + host);
  }
  return {};
}

std::string handshake_failure(stream::tls_layer& s, const error_code& ec, bool& verification) {
  const long result = SSL_get_verify_result(s.native_handle());
  verification = result != X509_V_OK;
  if (verification) {
    ERR_clear_error();
    return std::string("certificate verification failed: ") + X509_verify_cert_error_string(result);
  }
  return ec.message();
}

// The erased handler runs on the stream's executor. Boost 1.81's any_completion_executor (the
// executor an any_completion_handler reports) cannot be required never to block, which Asio's
// and Beast's operations need for their posts; every handler here is one of Beast's operations
// or a session's, whose executor is the stream's anyway (a strand).
namespace {
template <class Handler>
auto on(stream& s, Handler&& handler) {
  return boost::asio::bind_executor(s.get_executor(), std::forward<Handler>(handler));
}
}  // namespace

void stream::start_read(boost::asio::mutable_buffer buffer, io_handler handler) {
  if (auto* t = tls()) return t->async_read_some(buffer, on(*this, std::move(handler)));
  std::get<tcp_layer>(s_).async_read_some(buffer, on(*this, std::move(handler)));
}

void stream::start_write(const gathered& buffers, io_handler handler) {
  if (auto* t = tls()) return t->async_write_some(buffers, on(*this, std::move(handler)));
  std::get<tcp_layer>(s_).async_write_some(buffers, on(*this, std::move(handler)));
}

void stream::start_handshake(ssl::stream_base::handshake_type type, done_handler handler) {
  if (auto* t = tls()) return t->async_handshake(type, on(*this, std::move(handler)));
  boost::asio::post(on(*this, boost::asio::append(std::move(handler), error_code{})));
}

void async_teardown(boost::beast::role_type role, stream& s, stream::done_handler handler) {
  if (auto* t = s.tls()) return boost::beast::async_teardown(role, *t, on(s, std::move(handler)));
  boost::beast::async_teardown(role, s.next_layer(), on(s, std::move(handler)));
}

}  // namespace loopguard::tls
