// A self-signed certificate made by the test with OpenSSL's API: a P-256 key and an X.509 v3
// certificate valid for a day, written as PEM files. It is its own CA: a client given the
// certificate file as its CA file trusts it.
#pragma once

#include <string>

namespace loopguard::test {

// Writes the certificate to `cert_file` and its private key to `key_file`. `alt_names` is the
// subjectAltName value, e.g. "DNS:localhost,IP:127.0.0.1"; the common name is `common_name`.
// Throws std::runtime_error naming the step that failed.
void write_self_signed(const std::string& cert_file, const std::string& key_file,
                       const std::string& common_name, const std::string& alt_names);

}  // namespace loopguard::test
