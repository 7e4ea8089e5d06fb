// The job credential: the secret a coordinator presents on every
// Worker.Evaluate, so that a worker runs jobs for its coordinator and for
// nobody else who reaches its port. The coordinator makes a new one at each
// registration (RegisterWorkerResponse.job_credential); a worker listed in
// configuration instead shares one with the coordinator through a file.
// Header-only; thread-safe.
#ifndef KERNELSEEK_PROTO_JOB_CREDENTIAL_H_
#define KERNELSEEK_PROTO_JOB_CREDENTIAL_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace kseek {

// The gRPC metadata key that carries it.
inline constexpr char kJobCredentialMetadata[] = "x-kseek-job-credential";

// Whether `presented` equals `expected`, in time that depends only on their
// lengths (a caller learns nothing from how long a refusal took). An empty
// `expected` matches nothing.
inline bool JobCredentialMatches(absl::string_view presented, absl::string_view expected) {
  if (expected.empty() || presented.size() != expected.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(presented[i] ^ expected[i]);
  }
  return diff == 0;
}

}  // namespace kseek

#endif  // KERNELSEEK_PROTO_JOB_CREDENTIAL_H_
