// Small text helpers for agent output: what reaches a trace is valid UTF-8
// and bounded in size. Pure functions; safe from any thread.
#ifndef KERNELSEEK_SERVER_AGENT_TEXT_H_
#define KERNELSEEK_SERVER_AGENT_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace kseek::agent {

// `text` with every byte that is not part of a well-formed UTF-8 sequence
// replaced by U+FFFD, so that it can be stored as a JSON string.
std::string ValidUtf8(absl::string_view text);

// `text` (made valid UTF-8) if it is at most `max_bytes` long; otherwise
// its head and tail around a marker that says how many bytes were left out.
// The cut falls on character boundaries.
std::string Abbreviate(absl::string_view text, size_t max_bytes);

// The last `n` non-empty lines of `text`, joined by '\n'.
std::string LastLines(absl::string_view text, int n);

// True when `text` holds one of the messages with which the agent CLIs or
// their model APIs report missing, invalid or expired credentials (Claude
// Code: "Not logged in", authentication_failed, "Invalid API key"; Codex:
// "401 Unauthorized", invalid_api_key, an expired or rejected login).
bool LooksLikeAuthFailure(absl::string_view text);

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_TEXT_H_
