#include "client/report_plot.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/report_style.h"

namespace kseek::report {
namespace {

// Layout in SVG user units (= CSS px).
constexpr double kWidth = 1100;
constexpr double kLeft = 72;     // room for the y tick labels
constexpr double kRight = 1080;
constexpr double kTop = 40;      // room for the title
constexpr double kBottom = 330;  // the x axis
constexpr double kLegendTop = 378;
constexpr double kLegendRow = 22;
constexpr double kLegendItemWidth = 240;  // four to a row: the plot, then the questions
constexpr double kMarkerRadius = 5;
constexpr double kMarkerStack = 12;  // vertical offset of markers at one x

std::string Num(double v) { return absl::StrFormat("%.1f", v); }

// Ticks at a multiple of 1, 2 or 5 times a power of ten, about `target` of
// them between lo and hi.
std::vector<double> LinearTicks(double lo, double hi, int target, double min_step) {
  double raw = std::max((hi - lo) / target, 1e-12);
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double r = raw / magnitude;
  double step = magnitude * (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10);
  step = std::max(step, min_step);
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

// Ticks for a log axis: the coarsest of these mantissa sets that gives at
// least four ticks; a narrow range is nearly linear and gets linear ticks.
std::vector<double> LogTicks(double lo, double hi) {
  if (hi / lo < 4) return LinearTicks(lo, hi, 5, 0);
  static const std::vector<std::vector<double>> kSets = {
      {1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}, {1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8}};
  std::vector<double> ticks;
  for (const std::vector<double>& set : kSets) {
    ticks.clear();
    for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= std::ceil(std::log10(hi)); ++e) {
      for (double m : set) {
        double v = m * std::pow(10, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
    }
    if (ticks.size() >= 4) break;
  }
  return ticks;
}

class Canvas {
 public:
  explicit Canvas(const StepPlot& plot) : plot_(plot) {
    std::vector<double> ys = {1.0};
    if (plot.goal.has_value() && *plot.goal > 0) ys.push_back(*plot.goal);
    for (const PlotPoint& p : plot.steps) ys.push_back(p.y);
    for (const PlotPoint& p : plot.dots) ys.push_back(p.y);
    hi_ = *std::max_element(ys.begin(), ys.end());
    lo_ = std::max(*std::min_element(ys.begin(), ys.end()), hi_ / 100);
    // At least a 1.5x span, then a margin of 6% of it on both sides.
    double span = std::max(std::log(hi_ / lo_), std::log(1.5));
    double mid = (std::log(hi_) + std::log(lo_)) / 2;
    lo_ = std::exp(mid - span * 0.56);
    hi_ = std::exp(mid + span * 0.56);
    x_max_ = plot.x_max > 0 ? plot.x_max : 1;
  }

  double X(double x) const { return kLeft + std::clamp(x / x_max_, 0.0, 1.0) * (kRight - kLeft); }
  double Y(double v) const {
    double f = (std::log(hi_) - std::log(std::clamp(v, lo_, hi_))) / (std::log(hi_) - std::log(lo_));
    return kTop + f * (kBottom - kTop);
  }

  std::string Axes() const {
    std::string out = "<g class=\"axes\" font-size=\"12\" fill=\"#333\">\n";
    for (double v : LogTicks(lo_, hi_)) {
      absl::StrAppend(&out, "<line x1=\"", Num(kLeft), "\" x2=\"", Num(kRight), "\" y1=\"", Num(Y(v)),
                      "\" y2=\"", Num(Y(v)), "\" stroke=\"#e6e6e6\"/>",
                      "<text x=\"", Num(kLeft - 6), "\" y=\"", Num(Y(v) + 4),
                      "\" text-anchor=\"end\">", absl::StrFormat("%gx", v), "</text>\n");
    }
    for (double x : LinearTicks(0, x_max_, 10, plot_.integer_x ? 1 : 0)) {
      absl::StrAppend(&out, "<line x1=\"", Num(X(x)), "\" x2=\"", Num(X(x)), "\" y1=\"", Num(kBottom),
                      "\" y2=\"", Num(kBottom + 5), "\" stroke=\"#333\"/>", "<text x=\"", Num(X(x)),
                      "\" y=\"", Num(kBottom + 19), "\" text-anchor=\"middle\">",
                      absl::StrFormat("%g", x), "</text>\n");
    }
    absl::StrAppend(&out, "<rect x=\"", Num(kLeft), "\" y=\"", Num(kTop), "\" width=\"",
                    Num(kRight - kLeft), "\" height=\"", Num(kBottom - kTop),
                    "\" fill=\"none\" stroke=\"#333\"/>\n");
    absl::StrAppend(&out, "<text x=\"", Num((kLeft + kRight) / 2), "\" y=\"", Num(kBottom + 38),
                    "\" text-anchor=\"middle\" font-size=\"13\">", EscapeHtml(plot_.x_label),
                    "</text>\n");
    absl::StrAppend(&out, "<text transform=\"translate(16 ", Num((kTop + kBottom) / 2),
                    ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">",
                    "geomean speedup over the baseline (log scale)</text>\n</g>\n");
    return out;
  }

  std::string Goal() const {
    if (!plot_.goal.has_value() || *plot_.goal <= 0) return "";
    double y = Y(*plot_.goal);
    return absl::StrCat("<line class=\"goal\" x1=\"", Num(kLeft), "\" x2=\"", Num(kRight),
                        "\" y1=\"", Num(y), "\" y2=\"", Num(y), "\" stroke=\"", kGoalColour,
                        "\" stroke-width=\"1.5\" stroke-dasharray=\"7 5\"/>", "<text x=\"",
                        Num(kLeft + 6), "\" y=\"", Num(y - 5),
                        "\" font-size=\"12\" fill=\"", kGoalColour,
                        "\">goal ", EscapeHtml(FormatSpeedup(plot_.goal)), "</text>\n");
  }

  std::string Markers() const {
    std::string out;
    std::map<std::string, int> at_x;  // markers already drawn at one x
    for (const PlotMarker& m : plot_.markers) {
      double x = X(m.x);
      int stack = at_x[Num(x)]++;
      double cy = kTop + kMarkerRadius + 2 + stack * kMarkerStack;
      absl::string_view colour = CategoryColour(m.category);
      absl::StrAppend(&out, "<g class=\"question-marker\" data-category=\"",
                      EscapeHtml(m.category), "\"><title>", EscapeHtml(m.title), "</title>",
                      "<line x1=\"", Num(x), "\" x2=\"", Num(x), "\" y1=\"", Num(kTop), "\" y2=\"",
                      Num(kBottom), "\" stroke=\"", colour, "\" stroke-width=\"2\"/>",
                      "<circle cx=\"", Num(x), "\" cy=\"", Num(cy), "\" r=\"", Num(kMarkerRadius),
                      "\" fill=\"", colour, "\"/></g>\n");
    }
    return out;
  }

  std::string Evaluations() const {
    std::string out = "<g class=\"evaluations\">\n";
    for (const PlotPoint& p : plot_.dots) {
      absl::StrAppend(&out, "<circle class=\"evaluation-dot\" cx=\"", Num(X(p.x)), "\" cy=\"",
                      Num(Y(p.y)), "\" r=\"3.5\" fill=\"", kEvaluationDotColour, "\"/>\n");
    }
    for (double x : plot_.failures) {
      absl::StrAppend(&out, "<line class=\"evaluation-failure\" x1=\"", Num(X(x)), "\" x2=\"",
                      Num(X(x)), "\" y1=\"", Num(kBottom - 10), "\" y2=\"", Num(kBottom),
                      "\" stroke=\"", kFailureColour, "\" stroke-width=\"2\"/>\n");
    }
    return out + "</g>\n";
  }

  std::string BestLine() const {
    if (plot_.steps.empty()) {
      const char* note = plot_.dots.empty() && plot_.failures.empty() ? "no evaluations yet"
                                                                      : "no correct evaluation yet";
      return absl::StrCat("<text class=\"no-data\" x=\"", Num((kLeft + kRight) / 2), "\" y=\"",
                          Num((kTop + kBottom) / 2), "\" text-anchor=\"middle\" font-size=\"16\" ",
                          "fill=\"#666\">", note, "</text>\n");
    }
    std::string d = absl::StrCat("M ", Num(X(plot_.steps[0].x)), " ", Num(Y(plot_.steps[0].y)));
    for (size_t i = 1; i < plot_.steps.size(); ++i) {
      absl::StrAppend(&d, " H ", Num(X(plot_.steps[i].x)), " V ", Num(Y(plot_.steps[i].y)));
    }
    return absl::StrCat("<path class=\"best-line\" d=\"", d, "\" fill=\"none\" stroke=\"",
                        kBestLineColour, "\" stroke-width=\"3\" stroke-linejoin=\"miter\"/>\n");
  }

 private:
  const StepPlot& plot_;
  double lo_ = 0.5;
  double hi_ = 2;
  double x_max_ = 1;
};

// The legend below the plot: the line, the evaluations, the goal, then every
// question category.
std::string Legend() {
  std::vector<std::pair<std::string, std::string>> items;  // (swatch SVG at 0,0, label)
  items.push_back({absl::StrCat("<line x1=\"0\" x2=\"22\" y1=\"0\" y2=\"0\" stroke=\"",
                                kBestLineColour, "\" stroke-width=\"3\"/>"),
                   "best speedup so far"});
  items.push_back({absl::StrCat("<circle cx=\"11\" cy=\"0\" r=\"3.5\" fill=\"",
                                kEvaluationDotColour, "\"/>"),
                   "correct evaluation"});
  items.push_back({absl::StrCat("<line x1=\"11\" x2=\"11\" y1=\"-6\" y2=\"4\" stroke=\"",
                                kFailureColour, "\" stroke-width=\"2\"/>"),
                   "evaluation not correct"});
  items.push_back({absl::StrCat("<line x1=\"0\" x2=\"22\" y1=\"0\" y2=\"0\" stroke=\"", kGoalColour,
                                "\" stroke-width=\"1.5\" stroke-dasharray=\"7 5\"/>"),
                   "goal"});
  for (const std::string& category : LegendCategories()) {
    items.push_back({absl::StrCat("<circle cx=\"11\" cy=\"0\" r=\"", Num(kMarkerRadius),
                                  "\" fill=\"", CategoryColour(category), "\"/>"),
                     absl::StrCat("question: ", CategoryLabel(category))});
  }
  int per_row = static_cast<int>((kRight - kLeft) / kLegendItemWidth);
  std::string out = "<g class=\"legend\" font-size=\"12\" fill=\"#333\">\n";
  for (size_t i = 0; i < items.size(); ++i) {
    double x = kLeft + (i % per_row) * kLegendItemWidth;
    double y = kLegendTop + (i / per_row) * kLegendRow;
    absl::StrAppend(&out, "<g transform=\"translate(", Num(x), " ", Num(y), ")\">",
                    items[i].first, "<text x=\"28\" y=\"4\">", EscapeHtml(items[i].second),
                    "</text></g>\n");
  }
  return out + "</g>\n";
}

int LegendRows() {
  int per_row = static_cast<int>((kRight - kLeft) / kLegendItemWidth);
  int items = 4 + static_cast<int>(LegendCategories().size());
  return (items + per_row - 1) / per_row;
}

}  // namespace

std::string RenderStepPlotSvg(const StepPlot& plot) {
  Canvas canvas(plot);
  double height = kLegendTop + LegendRows() * kLegendRow;
  std::string out = absl::StrCat(
      "<svg class=\"plot\" id=\"", EscapeHtml(plot.id), "\" width=\"", Num(kWidth), "\" height=\"",
      Num(height), "\" viewBox=\"0 0 ", Num(kWidth), " ", Num(height), "\" role=\"img\" ",
      "font-family=\"sans-serif\">\n<title>", EscapeHtml(plot.title), "</title>\n",
      "<text x=\"", Num(kLeft), "\" y=\"24\" font-size=\"15\" font-weight=\"bold\" fill=\"#222\">",
      EscapeHtml(plot.title), "</text>\n");
  absl::StrAppend(&out, canvas.Axes(), canvas.Goal(), canvas.Markers(), canvas.Evaluations(),
                  canvas.BestLine(), Legend(), "</svg>\n");
  return out;
}

}  // namespace kseek::report
