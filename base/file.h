// Reading whole files, with errors that name the file and the reason
// ("/etc/x.pem: cannot read: No such file or directory"), and the files
// that flags name (tokens, TLS certificates), with one wording for all of
// them. Pure functions; safe from any thread. And FdCloser, which closes
// a descriptor on every path out of a scope.
#ifndef KERNELSEEK_BASE_FILE_H_
#define KERNELSEEK_BASE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kseek {

// Closes `fd` when it goes out of scope (nothing for a negative one, so it
// may hold an open's result before the test for failure).
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser();
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

// The bytes of `path`. The error's code follows errno (NOT_FOUND for a
// missing file, PERMISSION_DENIED, ...) and its message is
// "PATH: cannot read: REASON".
absl::StatusOr<std::string> ReadFile(const std::string& path);

// The bytes of a file that a setting names, e.g. `what` "--tls-cert" or
// "TLS CA file": "WHAT PATH: cannot read: REASON", and INVALID_ARGUMENT
// "WHAT PATH: the file is empty" for an empty one (a file a setting names
// always has to say something).
absl::StatusOr<std::string> ReadNamedFile(absl::string_view what, const std::string& path);

// A bearer token from a file a setting names: its text without surrounding
// white space, the errors of ReadNamedFile (a file of white space only is
// empty too).
absl::StatusOr<std::string> ReadTokenFile(absl::string_view what, const std::string& path);

}  // namespace kseek

#endif  // KERNELSEEK_BASE_FILE_H_
