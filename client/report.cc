#include "client/report.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/json_reader.h"
#include "client/report_plot.h"
#include "client/report_style.h"
#include "client/report_trace.h"

namespace kseek::report {
namespace {

using nlohmann::json;

// Longest agent text shown in a table cell.
constexpr size_t kMaxCellText = 1500;

struct Summary {
  std::string session_id, task, target, agent, state;
  std::optional<double> goal;
  int64_t created_ms = 0;
};

struct StatRow {
  std::string question_id, text, category;
  int64_t asked = 0;
  int64_t gains = 0;
  std::optional<double> median_gain;
};

absl::StatusOr<Summary> ReadSummary(const json& summary) {
  if (!summary.is_null() && !summary.is_object()) {
    return absl::InvalidArgumentError("session summary: not a JSON object");
  }
  JsonReader r(summary, "session summary");
  Summary s;
  s.session_id = r.StringOr("session_id");
  s.task = r.StringOr("task");
  s.target = r.StringOr("target");
  s.agent = r.StringOr("agent");
  s.state = r.StringOr("state");
  s.goal = r.OptionalNumber("goal_speedup");
  s.created_ms = r.IntOr("created_ms");
  if (!r.status().ok()) return r.status();
  return s;
}

absl::StatusOr<std::vector<StatRow>> ReadStats(const json& stats) {
  std::vector<StatRow> rows;
  if (stats.is_null()) return rows;
  if (!stats.is_array()) {
    return absl::InvalidArgumentError("question statistics: not a JSON list");
  }
  for (size_t i = 0; i < stats.size(); ++i) {
    JsonReader r = JsonReader(stats, "question statistics").Element(i);
    if (!stats[i].is_object()) return r.Error("not a JSON object");
    StatRow row;
    row.question_id = r.StringOr("question_id");
    row.text = r.StringOr("text");
    row.category = r.StringOr("category");
    row.asked = r.IntOr("asked");
    row.gains = r.IntOr("gains");
    row.median_gain = r.OptionalNumber("median_gain");
    if (!r.status().ok()) return r.status();
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string OrDash(const std::string& text) { return text.empty() ? "—" : EscapeHtml(text); }

std::string Swatch(absl::string_view category) {
  return absl::StrCat("<span class=\"swatch\" style=\"background:", CategoryColour(category),
                      "\"></span>");
}

std::optional<double> Gain(std::optional<double> before, std::optional<double> after) {
  if (!before.has_value() || !after.has_value()) return std::nullopt;
  return *after / *before - 1;
}

constexpr absl::string_view kStyle = R"(
body { font-family: sans-serif; color: #222; margin: 24px auto; max-width: 1120px; padding: 0 10px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p.subtitle { color: #555; margin: 0 0 14px; }
span.note { color: #777; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { white-space: pre-wrap; overflow-wrap: anywhere; max-width: 520px; }
table.summary th { width: 150px; }
tr.not-correct td { color: #888; }
tr.new-best td.best { font-weight: bold; }
span.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 5px; border-radius: 5px; }
svg.plot { display: block; margin: 8px 0; }
p.empty { color: #666; font-style: italic; }
)";

class Page {
 public:
  Page(const Summary& summary, const SessionTrace& trace, const std::vector<StatRow>& stats)
      : s_(summary), t_(trace), stats_(stats) {
    start_ms_ = s_.created_ms > 0 ? s_.created_ms : t_.first_ms;
  }

  std::string Render() const {
    std::string title = absl::StrCat("KernelSeek session ", s_.session_id.empty() ? "—" : s_.session_id);
    std::string out = absl::StrCat(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
        EscapeHtml(title), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n");
    absl::StrAppend(&out, Header(title), "<h2>Best speedup</h2>\n",
                    RenderStepPlotSvg(EvaluationPlot()), RenderStepPlotSvg(TimePlot()),
                    Evaluations(), Questions(), Turns(), Statistics(), "</body>\n</html>\n");
    return out;
  }

 private:
  std::string Elapsed(int64_t time_ms) const { return FormatElapsed(time_ms - start_ms_); }
  double Minutes(int64_t time_ms) const { return (time_ms - start_ms_) / 60000.0; }

  std::string Header(const std::string& title) const {
    std::string state = s_.state.empty() ? t_.last_state : s_.state;
    std::string state_text = OrDash(state);
    if (!state.empty() && state == t_.last_state && !t_.last_state_reason.empty()) {
      absl::StrAppend(&state_text, " (", EscapeHtml(t_.last_state_reason), ")");
    }
    std::set<int64_t> turns;
    for (const TurnRow& turn : t_.turns) turns.insert(turn.turn);
    int correct = 0, verifications = 0;
    for (const EvaluationRow& e : t_.evaluations) {
      correct += e.speedup.has_value();
      verifications += e.by == "verification";
    }
    int human = 0, bank = 0, self = 0;
    for (const AskedQuestion& q : t_.questions) {
      human += q.source == "human";
      bank += q.source == "bank";
      self += q.source == "self";
    }
    std::vector<std::pair<std::string, std::string>> rows = {
        {"Task", OrDash(s_.task)},
        {"Target", OrDash(s_.target)},
        {"Agent", OrDash(s_.agent)},
        {"Goal", EscapeHtml(FormatSpeedup(s_.goal))},
        {"Final state", state_text},
        {"Best speedup (verified)", EscapeHtml(FormatSpeedup(t_.best_verified))},
        {"Agent's own best (unverified)",
         absl::StrCat(EscapeHtml(FormatSpeedup(t_.best_by_agent)),
                      " <span class=\"note\">measured by the agent's own evaluations; only a "
                      "verification by the coordinator counts</span>")},
        {"Started", start_ms_ > 0 ? EscapeHtml(FormatUtc(start_ms_)) : "—"},
        {"Duration", t_.last_ms > 0 && start_ms_ > 0 ? std::string(absl::StripPrefix(Elapsed(t_.last_ms), "+")) : "—"},
        {"Turns", absl::StrCat(turns.size())},
        {"Evaluations", absl::StrCat(t_.evaluations.size(), " (", correct, " correct, ",
                                     verifications, " by verification)")},
        {"Questions", absl::StrCat(t_.questions.size(), " (", human, " human, ", bank, " bank, ",
                                   self, " self-asked); human messages received: ", t_.human_messages)},
        {"Cost", absl::StrFormat("$%.2f (%d input tokens, %d output tokens)", t_.cost_usd,
                                 t_.input_tokens, t_.output_tokens)},
    };
    std::string out = absl::StrCat("<h1>", EscapeHtml(title), "</h1>\n<p class=\"subtitle\">",
                                   OrDash(s_.task), " on ", OrDash(s_.target), " by ",
                                   OrDash(s_.agent), "</p>\n<table class=\"summary\">\n");
    for (const auto& [name, value] : rows) {
      absl::StrAppend(&out, "<tr><th>", name, "</th><td>", value, "</td></tr>\n");
    }
    return out + "</table>\n";
  }

  // The two plots share everything but the x axis.
  StepPlot BasePlot(const std::function<double(const EvaluationRow&)>& x_of_evaluation) const {
    StepPlot plot;
    plot.goal = s_.goal;
    for (const EvaluationRow& e : t_.evaluations) {
      double x = x_of_evaluation(e);
      if (e.best_so_far.has_value()) plot.steps.push_back({x, *e.best_so_far});
      if (e.speedup.has_value()) {
        plot.dots.push_back({x, *e.speedup});
      } else {
        plot.failures.push_back(x);
      }
    }
    return plot;
  }

  static std::string MarkerTitle(const AskedQuestion& q) {
    return absl::StrCat(q.source, q.category.empty() ? "" : ", ", CategoryLabel(q.category), ": ",
                        q.text);
  }

  StepPlot EvaluationPlot() const {
    StepPlot plot = BasePlot([](const EvaluationRow& e) { return e.number; });
    plot.id = "plot-evaluations";
    plot.title = "Best speedup so far, by evaluation";
    plot.x_label = "evaluation number (a question is marked after the evaluations that preceded it)";
    plot.integer_x = true;
    plot.x_max = std::max<double>(t_.evaluations.size(), 1);
    for (const AskedQuestion& q : t_.questions) {
      plot.markers.push_back(
          {static_cast<double>(q.evaluations_before), MarkerCategory(q.source, q.category),
           MarkerTitle(q)});
    }
    return plot;
  }

  StepPlot TimePlot() const {
    StepPlot plot = BasePlot([this](const EvaluationRow& e) { return Minutes(e.time_ms); });
    plot.id = "plot-time";
    plot.title = "Best speedup so far, by time";
    plot.x_label = "minutes since the session started";
    plot.x_max = std::max(t_.last_ms > 0 ? Minutes(t_.last_ms) : 0.0, 1.0);
    for (const AskedQuestion& q : t_.questions) {
      plot.markers.push_back(
          {Minutes(q.time_ms), MarkerCategory(q.source, q.category), MarkerTitle(q)});
    }
    return plot;
  }

  std::string Evaluations() const {
    std::string out = "<h2>Evaluations</h2>\n";
    if (t_.evaluations.empty()) return out + "<p class=\"empty\">No evaluation yet.</p>\n";
    absl::StrAppend(&out, "<table class=\"evaluations\">\n<tr><th>#</th><th>time</th><th>by</th>",
                    "<th>correct</th><th>speedup</th><th>best so far</th><th>verification</th>",
                    "</tr>\n");
    std::optional<double> previous_best;
    for (const EvaluationRow& e : t_.evaluations) {
      bool new_best = e.best_so_far.has_value() && e.best_so_far != previous_best;
      previous_best = e.best_so_far;
      std::string row_class = !e.speedup.has_value() ? "not-correct" : new_best ? "new-best" : "";
      std::string correct = e.compiled ? absl::StrCat(e.correct, "/", e.total) : "did not compile";
      absl::StrAppend(&out, "<tr", row_class.empty() ? "" : absl::StrCat(" class=\"", row_class, "\""),
                      "><td class=\"num\">", e.number, "</td><td class=\"num\">",
                      Elapsed(e.time_ms), "</td><td>",
                      e.by == "agent" ? "agent (unverified)" : OrDash(e.by),
                      "</td><td class=\"num\">",
                      correct, "</td><td class=\"num\">", EscapeHtml(FormatSpeedup(e.speedup)),
                      "</td><td class=\"num best\">", EscapeHtml(FormatSpeedup(e.best_so_far)),
                      "</td><td class=\"text\">", EscapeHtml(e.verification), "</td></tr>\n");
    }
    return out + "</table>\n";
  }

  std::string Questions() const {
    std::string out = "<h2>Questions asked</h2>\n";
    if (t_.questions.empty()) return out + "<p class=\"empty\">No question was asked.</p>\n";
    absl::StrAppend(&out, "<table class=\"questions\">\n<tr><th>time</th><th>after evaluation</th>",
                    "<th>source</th><th>category</th><th>question</th><th>reason</th>",
                    "<th>best before</th><th>best before the next question</th><th>gain</th></tr>\n");
    for (const AskedQuestion& q : t_.questions) {
      std::string category = MarkerCategory(q.source, q.category);
      std::string gain = !q.best_before.has_value() && q.best_after.has_value()
                             ? "first correct"
                             : EscapeHtml(FormatGain(Gain(q.best_before, q.best_after)));
      absl::StrAppend(&out, "<tr><td class=\"num\">", Elapsed(q.time_ms), "</td><td class=\"num\">",
                      q.evaluations_before, "</td><td>", OrDash(q.source), "</td><td>",
                      Swatch(category), EscapeHtml(CategoryLabel(category)), "</td><td class=\"text\">",
                      EscapeHtml(q.text),
                      q.question_id.empty() ? "" : absl::StrCat(" <small>(", EscapeHtml(q.question_id), ")</small>"),
                      "</td><td class=\"text\">", EscapeHtml(q.reason), "</td><td class=\"num\">",
                      EscapeHtml(FormatSpeedup(q.best_before)), "</td><td class=\"num\">",
                      EscapeHtml(FormatSpeedup(q.best_after)), "</td><td class=\"num\">", gain,
                      "</td></tr>\n");
    }
    return out + "</table>\n";
  }

  std::string Turns() const {
    std::string out = "<h2>Turns</h2>\n";
    if (t_.turns.empty()) return out + "<p class=\"empty\">No turn yet.</p>\n";
    absl::StrAppend(&out, "<table class=\"turns\">\n<tr><th>turn</th><th>started</th>",
                    "<th>ended</th><th>resumed</th><th>result</th></tr>\n");
    for (const TurnRow& turn : t_.turns) {
      std::string result = EscapeHtml(Truncate(turn.result, kMaxCellText));
      if (turn.is_error) result = absl::StrCat("<b>error:</b> ", result);
      absl::StrAppend(&out, "<tr><td class=\"num\">", turn.turn, "</td><td class=\"num\">",
                      Elapsed(turn.start_ms), "</td><td class=\"num\">",
                      turn.end_ms.has_value() ? Elapsed(*turn.end_ms) : "—", "</td><td>",
                      turn.resumed ? "yes" : "no", "</td><td class=\"text\">", result,
                      "</td></tr>\n");
    }
    return out + "</table>\n";
  }

  std::string Statistics() const {
    std::string out = "<h2>Question statistics (all sessions)</h2>\n";
    if (stats_.empty()) return out + "<p class=\"empty\">No statistics.</p>\n";
    absl::StrAppend(&out, "<table class=\"statistics\">\n<tr><th>category</th><th>question</th>",
                    "<th>asked</th><th>gains</th><th>median gain</th><th>asked here</th></tr>\n");
    for (const StatRow& row : stats_) {
      int here = static_cast<int>(std::count_if(
          t_.questions.begin(), t_.questions.end(), [&](const AskedQuestion& q) {
            return !row.question_id.empty() && q.question_id == row.question_id;
          }));
      absl::StrAppend(&out, "<tr><td>", Swatch(row.category), EscapeHtml(CategoryLabel(row.category)),
                      "</td><td class=\"text\">", EscapeHtml(row.text), " <small>(",
                      EscapeHtml(row.question_id), ")</small></td><td class=\"num\">", row.asked,
                      "</td><td class=\"num\">", row.gains, "</td><td class=\"num\">",
                      EscapeHtml(FormatGain(row.median_gain)), "</td><td class=\"num\">", here,
                      "</td></tr>\n");
    }
    return out + "</table>\n";
  }

  const Summary& s_;
  const SessionTrace& t_;
  const std::vector<StatRow>& stats_;
  int64_t start_ms_ = 0;
};

}  // namespace

absl::StatusOr<std::string> RenderSessionReport(const json& session_summary,
                                                const std::vector<json>& events,
                                                const json& question_stats) {
  absl::StatusOr<Summary> summary = ReadSummary(session_summary);
  if (!summary.ok()) return summary.status();
  absl::StatusOr<SessionTrace> trace = ReadTrace(events);
  if (!trace.ok()) return trace.status();
  absl::StatusOr<std::vector<StatRow>> stats = ReadStats(question_stats);
  if (!stats.ok()) return stats.status();
  return Page(*summary, *trace, *stats).Render();
}

}  // namespace kseek::report
