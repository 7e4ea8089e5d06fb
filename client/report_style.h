// The session report's palette and text helpers: the colour of every
// question category (one per bank category, one for a human's question), the
// colours of the plots' lines, HTML escaping, and how speedups, gains and
// times are written. Everything here is a pure function or a constant;
// thread-safe.
#ifndef KERNELSEEK_CLIENT_REPORT_STYLE_H_
#define KERNELSEEK_CLIENT_REPORT_STYLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace kseek::report {

// "#rrggbb" colours of the plots.
inline constexpr absl::string_view kBestLineColour = "#1f4e9c";    // best speedup so far
inline constexpr absl::string_view kEvaluationDotColour = "#9fb3d9";  // one correct evaluation
inline constexpr absl::string_view kFailureColour = "#a0a0a0";     // one failed evaluation
inline constexpr absl::string_view kGoalColour = "#555555";        // the goal (dashed)
inline constexpr absl::string_view kUnknownCategoryColour = "#7f7f7f";

// The category a question is drawn as: its bank category, or "human" for a
// human's question (source "human", whose category is empty).
inline constexpr absl::string_view kHumanCategory = "human";
std::string MarkerCategory(absl::string_view source, absl::string_view category);

// The six bank categories (question_bank/README.md) in legend order, then
// "human".
const std::vector<std::string>& LegendCategories();
// A category's colour; kUnknownCategoryColour for a name not in
// LegendCategories().
absl::string_view CategoryColour(absl::string_view category);
// "moving layer" for "moving_layer".
std::string CategoryLabel(absl::string_view category);

// Text for HTML element content and attribute values: & < > " ' escaped,
// control characters other than tab and newline replaced by U+FFFD.
std::string EscapeHtml(absl::string_view text);
// At most `max_bytes` bytes of `text`, cut at a UTF-8 character boundary,
// with "…" appended when cut.
std::string Truncate(absl::string_view text, size_t max_bytes);

// "1.127x"; "—" when absent.
std::string FormatSpeedup(std::optional<double> speedup);
// "+12.3%" for 0.123; "—" when absent.
std::string FormatGain(std::optional<double> gain);
// Time since the start: "+4:05" (minutes:seconds) or "+1:02:03".
std::string FormatElapsed(int64_t elapsed_ms);
// "2026-11-18 10:40:00 UTC" for unix epoch milliseconds.
std::string FormatUtc(int64_t time_ms);

}  // namespace kseek::report

#endif  // KERNELSEEK_CLIENT_REPORT_STYLE_H_
