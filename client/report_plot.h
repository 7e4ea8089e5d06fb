// One plot of the session report, drawn as inline SVG (no script, no
// external reference): the best speedup so far as a step line over an x axis
// (evaluation number, or minutes since the start), each correct evaluation
// as a dot, each failed one as a tick on the x axis, the goal as a dashed
// line, and each question as a vertical line with a dot on top in its
// category's colour (report_style.h), with a legend of all of these.
//
// The y axis is logarithmic (a 2x gain is the same height everywhere). The
// step line is one SVG path: "M x y" at the first step, then "H x V y" for
// every later one, so it has exactly one command pair per evaluation.
// Plain values and a pure function; thread-safe.
#ifndef KERNELSEEK_CLIENT_REPORT_PLOT_H_
#define KERNELSEEK_CLIENT_REPORT_PLOT_H_

#include <optional>
#include <string>
#include <vector>

namespace kseek::report {

struct PlotPoint {
  double x = 0;
  double y = 0;
};

struct PlotMarker {
  double x = 0;
  std::string category;  // MarkerCategory(); picks the colour
  std::string title;     // shown on hover
};

struct StepPlot {
  std::string id;       // the SVG element's id
  std::string title;
  std::string x_label;
  double x_max = 1;     // the x axis runs from 0 to x_max
  bool integer_x = false;  // x ticks on whole numbers only
  // (x, best so far) for every evaluation from the first correct one on.
  std::vector<PlotPoint> steps;
  std::vector<PlotPoint> dots;   // (x, speedup) of each correct evaluation
  std::vector<double> failures;  // x of each evaluation that was not correct
  std::optional<double> goal;
  std::vector<PlotMarker> markers;
};

// The <svg> element, 1100 px wide.
std::string RenderStepPlotSvg(const StepPlot& plot);

}  // namespace kseek::report

#endif  // KERNELSEEK_CLIENT_REPORT_PLOT_H_
