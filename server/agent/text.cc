#include "server/agent/text.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace kseek::agent {
namespace {

constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at text[i], or 0 if there is none.
size_t SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const auto continuation = [&](size_t k) { return k < text.size() && (byte(k) & 0xC0) == 0x80; };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!continuation(i + 1) || !continuation(i + 2)) return 0;
    const unsigned char b1 = byte(i + 1);
    if (b == 0xE0 && b1 < 0xA0) return 0;  // overlong
    if (b == 0xED && b1 > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    const unsigned char b1 = byte(i + 1);
    if (b == 0xF0 && b1 < 0x90) return 0;  // overlong
    if (b == 0xF4 && b1 > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// The largest cut <= pos that does not split a character of valid `text`.
size_t CharBoundaryAtOrBefore(absl::string_view text, size_t pos) {
  while (pos > 0 && pos < text.size() &&
         (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) {
    --pos;
  }
  return pos;
}

}  // namespace

std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceLength(text, i);
    if (n == 0) {
      out.append(kReplacement.data(), kReplacement.size());
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string Abbreviate(absl::string_view text, size_t max_bytes) {
  std::string valid = ValidUtf8(text);
  if (valid.size() <= max_bytes) return valid;
  const size_t head = CharBoundaryAtOrBefore(valid, max_bytes / 2);
  const size_t tail = CharBoundaryAtOrBefore(valid, valid.size() - max_bytes / 2);
  const absl::string_view v(valid);
  return absl::StrCat(v.substr(0, head), "\n[... ", tail - head, " bytes left out ...]\n",
                      v.substr(tail));
}

std::string LastLines(absl::string_view text, int n) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(text, absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
  if (static_cast<int>(lines.size()) > n) lines.erase(lines.begin(), lines.end() - n);
  return absl::StrJoin(lines, "\n");
}

bool LooksLikeAuthFailure(absl::string_view text) {
  static constexpr absl::string_view kPatterns[] = {
      // Claude Code and the Anthropic API.
      "not logged in", "please run /login", "authentication_failed", "authentication_error",
      "invalid api key", "invalid x-api-key", "oauth token has expired",
      // Codex and the OpenAI API.
      "401 unauthorized", "incorrect api key", "invalid_api_key", "credential expired",
      "refresh token was rejected", "failed to refresh token"};
  const std::string lower = absl::AsciiStrToLower(text);
  for (absl::string_view pattern : kPatterns) {
    if (absl::StrContains(lower, pattern)) return true;
  }
  return false;
}

}  // namespace kseek::agent
