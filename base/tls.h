// The PEM files of a server's TLS certificate and key, named by its
// --tls-cert and --tls-key flags, read with base/file.h's wording of errors
// ("--tls-key /etc/k.pem: cannot read: Permission denied"). A CA certificate
// is one file: ReadNamedFile("--tls-ca", path). Pure functions; safe from any
// thread.
#ifndef KERNELSEEK_BASE_TLS_H_
#define KERNELSEEK_BASE_TLS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace kseek {

struct TlsServerPem {
  std::string cert;  // the certificate chain
  std::string key;   // its private key
};

// Nothing when both paths are empty (the server speaks plaintext);
// INVALID_ARGUMENT "--tls-cert and --tls-key go together" when one is.
absl::StatusOr<std::optional<TlsServerPem>> ReadTlsServerPem(const std::string& cert_path,
                                                             const std::string& key_path);

}  // namespace kseek

#endif  // KERNELSEEK_BASE_TLS_H_
