#include "test_certificate.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace loopguard::test {
namespace {

template <class T, void (*Free)(T*)>
struct freer {
  void operator()(T* p) const { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, freer<X509, X509_free>>;
using ext_ptr = std::unique_ptr<X509_EXTENSION, freer<X509_EXTENSION, X509_EXTENSION_free>>;

void check(bool ok, const char* step) {
  if (!ok) throw std::runtime_error(std::string("making a test certificate: ") + step);
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  ext_ptr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  check(ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1, value);
}

void write_pem(const std::string& path, const char* step, auto write) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, step);
  const bool ok = write(f) == 1;
  std::fclose(f);
  check(ok, step);
}

}  // namespace

void write_self_signed(const std::string& cert_file, const std::string& key_file,
                       const std::string& common_name, const std::string& alt_names) {
  pkey_ptr key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  x509_ptr cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), 2) == 1, "X509_set_version");
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  check(X509_set_pubkey(cert.get(), key.get()) == 1, "X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                   -1, 0) == 1,
        "the common name");
  check(X509_set_issuer_name(cert.get(), name) == 1, "X509_set_issuer_name");
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert.get(), NID_subject_key_identifier, "hash");
  add_extension(cert.get(), NID_subject_alt_name, alt_names.c_str());
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "X509_sign");
  write_pem(cert_file, "writing the certificate",
            [&](std::FILE* f) { return PEM_write_X509(f, cert.get()); });
  write_pem(key_file, "writing the key", [&](std::FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
}

}  // namespace loopguard::test
