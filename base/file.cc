#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace kseek {

FdCloser::~FdCloser() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot read"));
  FdCloser closer(fd);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot read"));
    }
    text.append(buf, static_cast<size_t>(n));
  }
}

absl::StatusOr<std::string> ReadNamedFile(absl::string_view what, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(), absl::StrCat(what, " ", text.status().message()));
  }
  if (text->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": the file is empty"));
  }
  return text;
}

absl::StatusOr<std::string> ReadTokenFile(absl::string_view what, const std::string& path) {
  absl::StatusOr<std::string> text = ReadNamedFile(what, path);
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": the file is empty"));
  }
  return token;
}

}  // namespace kseek
