#include "base/tls.h"

#include "absl/status/status.h"
#include "base/file.h"

namespace kseek {

absl::StatusOr<std::optional<TlsServerPem>> ReadTlsServerPem(const std::string& cert_path,
                                                             const std::string& key_path) {
  if (cert_path.empty() && key_path.empty()) return std::optional<TlsServerPem>();
  if (cert_path.empty() || key_path.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  TlsServerPem pem;
  absl::StatusOr<std::string> cert = ReadNamedFile("--tls-cert", cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadNamedFile("--tls-key", key_path);
  if (!key.ok()) return key.status();
  pem.cert = *std::move(cert);
  pem.key = *std::move(key);
  return std::optional<TlsServerPem>(std::move(pem));
}

}  // namespace kseek
