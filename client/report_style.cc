#include "client/report_style.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"

namespace kseek::report {
namespace {

// Colours far enough apart to tell markers apart on a white background, and
// apart from the plot's own blue, grey and light blue.
const std::vector<std::pair<std::string, std::string>>& Palette() {
  static const auto* palette = new std::vector<std::pair<std::string, std::string>>{
      {"moving_layer", "#d62728"},
      {"rejecting_limit", "#ff7f0e"},
      {"questioning_measurement", "#9467bd"},
      {"verifying_assumption", "#17becf"},
      {"first_principles", "#8c564b"},
      {"scope", "#e377c2"},
      {std::string(kHumanCategory), "#2ca02c"},
  };
  return *palette;
}

}  // namespace

std::string MarkerCategory(absl::string_view source, absl::string_view category) {
  return std::string(source == "human" ? kHumanCategory : category);
}

const std::vector<std::string>& LegendCategories() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& [name, colour] : Palette()) v->push_back(name);
    return v;
  }();
  return *names;
}

absl::string_view CategoryColour(absl::string_view category) {
  for (const auto& [name, colour] : Palette()) {
    if (name == category) return colour;
  }
  return kUnknownCategoryColour;
}

std::string CategoryLabel(absl::string_view category) {
  if (category.empty()) return "(none)";
  return absl::StrReplaceAll(category, {{"_", " "}});
}

std::string EscapeHtml(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string Truncate(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to a character's first byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(text.substr(0, cut), "…");
}

std::string FormatSpeedup(std::optional<double> speedup) {
  if (!speedup.has_value() || !std::isfinite(*speedup)) return "—";
  return absl::StrFormat("%.3fx", *speedup);
}

std::string FormatGain(std::optional<double> gain) {
  if (!gain.has_value() || !std::isfinite(*gain)) return "—";
  return absl::StrFormat("%+.1f%%", *gain * 100);
}

std::string FormatElapsed(int64_t elapsed_ms) {
  const char* sign = elapsed_ms < 0 ? "-" : "+";
  int64_t s = std::llabs(elapsed_ms) / 1000;
  if (s >= 3600) return absl::StrFormat("%s%d:%02d:%02d", sign, s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%s%d:%02d", sign, s / 60, s % 60);
}

std::string FormatUtc(int64_t time_ms) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(time_ms),
                          absl::UTCTimeZone());
}

}  // namespace kseek::report
