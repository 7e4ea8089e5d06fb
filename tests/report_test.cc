// The session report (client/report.h): rendered from the sample trace in
// tests/report_data/ and from small traces made here, then checked as text:
// one step of the best-speedup line per evaluation, one marker per question
// in its category's colour at the evaluation count when it was asked, the
// tables, every text escaped, and the edge cases (no events, no correct
// evaluation, one evaluation, null and NaN speedups, fields of the wrong
// type).
#include <cctype>
#include <cmath>
#include <fstream>
#include <regex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/report.h"
#include "client/report_style.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "question_bank/src/question.h"
#include "tests/test_util.h"

namespace kseek::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string DataDir() { return kseek::testing::SourceDir() + "/tests/report_data"; }

std::vector<json> ReadJsonl(const std::string& path) {
  std::vector<json> events;
  std::istringstream in(kseek::testing::ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) events.push_back(json::parse(line));
  }
  return events;
}

struct Sample {
  json summary = json::parse(kseek::testing::ReadFile(DataDir() + "/fa_hopper_summary.json"));
  std::vector<json> events = ReadJsonl(DataDir() + "/fa_hopper_session.jsonl");
  json stats = json::parse(kseek::testing::ReadFile(DataDir() + "/question_stats.json"));
};

std::string Render(const json& summary, const std::vector<json>& events, const json& stats) {
  absl::StatusOr<std::string> html = RenderSessionReport(summary, events, stats);
  EXPECT_TRUE(html.ok()) << html.status();
  return html.ok() ? *html : "";
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The <svg> element with this id.
std::string Svg(const std::string& html, const std::string& id) {
  size_t begin = html.find(absl::StrCat("<svg class=\"plot\" id=\"", id, "\""));
  if (begin == std::string::npos) return "";
  size_t end = html.find("</svg>", begin);
  return end == std::string::npos ? "" : html.substr(begin, end + 6 - begin);
}

// The table with this class.
std::string Table(const std::string& html, const std::string& cls) {
  size_t begin = html.find(absl::StrCat("<table class=\"", cls, "\""));
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</table>", begin) - begin);
}

// The best-speedup line of a plot: its "M x y" start and then one (x, y) per
// "H x V y" step.
struct StepLine {
  bool present = false;
  std::vector<std::pair<double, double>> points;  // the start, then each step
  int steps = 0;                                  // "H x V y" pairs
};

StepLine ParseStepLine(const std::string& svg) {
  StepLine line;
  std::smatch m;
  if (!std::regex_search(svg, m, std::regex("<path class=\"best-line\" d=\"([^\"]*)\""))) {
    return line;
  }
  line.present = true;
  std::vector<std::string> tokens = absl::StrSplit(m[1].str(), ' ', absl::SkipEmpty());
  size_t i = 0;
  double x = 0, y = 0;
  while (i < tokens.size()) {
    const std::string& cmd = tokens[i];
    if (cmd == "M" && i == 0 && i + 2 < tokens.size()) {
      EXPECT_TRUE(absl::SimpleAtod(tokens[i + 1], &x));
      EXPECT_TRUE(absl::SimpleAtod(tokens[i + 2], &y));
      line.points.push_back({x, y});
      i += 3;
    } else if (cmd == "H" && i + 3 < tokens.size() && tokens[i + 2] == "V") {
      EXPECT_TRUE(absl::SimpleAtod(tokens[i + 1], &x));
      EXPECT_TRUE(absl::SimpleAtod(tokens[i + 3], &y));
      line.points.push_back({x, y});
      ++line.steps;
      i += 4;
    } else {
      ADD_FAILURE() << "unexpected path command at " << i << ": " << m[1].str();
      break;
    }
  }
  return line;
}

struct Marker {
  std::string category;
  std::string stroke;
  std::string fill;
  double x = 0;
};

std::vector<Marker> ParseMarkers(const std::string& svg) {
  std::vector<Marker> markers;
  std::regex re(
      "<g class=\"question-marker\" data-category=\"([^\"]*)\">.*?<line x1=\"([^\"]*)\"[^>]*"
      "stroke=\"([^\"]*)\"[^>]*/><circle [^>]*fill=\"([^\"]*)\"/></g>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    Marker m;
    m.category = (*it)[1];
    EXPECT_TRUE(absl::SimpleAtod((*it)[2].str(), &m.x));
    m.stroke = (*it)[3];
    m.fill = (*it)[4];
    markers.push_back(m);
  }
  return markers;
}

// What the sample trace says, worked out here from the events themselves.
struct Expected {
  int evaluations = 0;
  int correct = 0;
  int first_correct = 0;  // 1-based number of the first correct evaluation
  std::vector<std::string> question_categories;  // human for a human's
  std::vector<int> asked_after;                  // evaluations before each question
  std::set<int64_t> turns;
  double cost = 0;
  std::optional<double> best_verified;
};

Expected Expect(const std::vector<json>& events) {
  Expected e;
  for (const json& ev : events) {
    std::string kind = ev.at("kind");
    if (kind == "evaluation") {
      ++e.evaluations;
      const json& s = ev.at("geomean_speedup");
      if (ev.at("all_correct").get<bool>() && s.is_number()) {
        ++e.correct;
        if (e.first_correct == 0) e.first_correct = e.evaluations;
        if (ev.value("by", "") == "verification" && s.get<double>() > 0 &&
            (!e.best_verified || s.get<double>() > *e.best_verified)) {
          e.best_verified = s.get<double>();
        }
      }
    } else if (kind == "question") {
      e.question_categories.push_back(ev.at("source") == "human" ? "human"
                                                                 : ev.at("category").get<std::string>());
      e.asked_after.push_back(e.evaluations);
    } else if (kind == "turn_start") {
      e.turns.insert(ev.at("turn").get<int64_t>());
    } else if (kind == "cost") {
      e.cost += ev.at("usd").get<double>();
    }
  }
  return e;
}

TEST(Report, SampleIsRealistic) {
  Sample s;
  Expected e = Expect(s.events);
  EXPECT_GE(e.evaluations, 20);
  EXPECT_LT(e.correct, e.evaluations);  // some evaluations failed
  std::set<std::string> categories(e.question_categories.begin(), e.question_categories.end());
  EXPECT_GE(categories.size(), 5u);  // four bank categories and a human's question
  EXPECT_TRUE(categories.count("human"));
}

TEST(Report, IsOneSelfContainedPage) {
  Sample s;
  std::string html = Render(s.summary, s.events, s.stats);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::EndsWith(html, "</html>\n"));
  for (const char* external : {"<script", "<link", "<img", "src=", "href=", "url(", "@import",
                               "http://", "https://"}) {
    EXPECT_THAT(html, Not(HasSubstr(external)));
  }
  EXPECT_EQ(Count(html, "<svg class=\"plot\""), 2);
}

TEST(Report, HeaderHasTheSessionAndTotals) {
  Sample s;
  Expected e = Expect(s.events);
  std::string header = Table(Render(s.summary, s.events, s.stats), "summary");
  EXPECT_THAT(header, HasSubstr(s.summary["task"].get<std::string>()));
  EXPECT_THAT(header, HasSubstr(s.summary["target"].get<std::string>()));
  EXPECT_THAT(header, HasSubstr(s.summary["agent"].get<std::string>()));
  EXPECT_THAT(header, HasSubstr(FormatSpeedup(s.summary["goal_speedup"].get<double>())));
  ASSERT_TRUE(e.best_verified.has_value());
  EXPECT_THAT(header, HasSubstr(absl::StrCat("<th>Best speedup (verified)</th><td>",
                                             FormatSpeedup(*e.best_verified), "</td>")));
  EXPECT_THAT(header, HasSubstr(absl::StrCat("<th>Final state</th><td>",
                                             s.summary["state"].get<std::string>())));
  EXPECT_THAT(header, HasSubstr(absl::StrCat("<th>Turns</th><td>", e.turns.size(), "</td>")));
  EXPECT_THAT(header, HasSubstr(absl::StrCat("<th>Evaluations</th><td>", e.evaluations, " (",
                                             e.correct, " correct")));
  EXPECT_THAT(header, HasSubstr(absl::StrCat("<th>Questions</th><td>",
                                             e.question_categories.size(), " (1 human")));
  EXPECT_THAT(header, HasSubstr(absl::StrFormat("$%.2f", e.cost)));
}

TEST(Report, EvaluationPlotHasOneStepPerEvaluation) {
  Sample s;
  Expected e = Expect(s.events);
  std::string svg = Svg(Render(s.summary, s.events, s.stats), "plot-evaluations");
  ASSERT_FALSE(svg.empty());
  StepLine line = ParseStepLine(svg);
  ASSERT_TRUE(line.present);
  // "M" at the first correct evaluation, then one step per evaluation after it.
  EXPECT_EQ(line.steps, e.evaluations - e.first_correct);
  for (size_t i = 1; i < line.points.size(); ++i) {
    EXPECT_GT(line.points[i].first, line.points[i - 1].first) << "x goes right at step " << i;
    EXPECT_LE(line.points[i].second, line.points[i - 1].second) << "the best never drops, step " << i;
  }
  EXPECT_LT(line.points.back().second, line.points.front().second);
  EXPECT_EQ(Count(svg, "class=\"evaluation-dot\""), e.correct);
  EXPECT_EQ(Count(svg, "class=\"evaluation-failure\""), e.evaluations - e.correct);
  EXPECT_EQ(Count(svg, "<line class=\"goal\""), 1);
  EXPECT_THAT(svg, HasSubstr(std::string(kBestLineColour)));
}

TEST(Report, EveryQuestionIsMarkedInItsCategoryColourWhereItWasAsked) {
  Sample s;
  Expected e = Expect(s.events);
  std::string html = Render(s.summary, s.events, s.stats);
  std::string svg = Svg(html, "plot-evaluations");
  StepLine line = ParseStepLine(svg);
  std::vector<Marker> markers = ParseMarkers(svg);
  ASSERT_EQ(markers.size(), e.question_categories.size());
  for (size_t i = 0; i < markers.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("question ", i));
    EXPECT_EQ(markers[i].category, e.question_categories[i]);
    EXPECT_EQ(markers[i].stroke, CategoryColour(e.question_categories[i]));
    EXPECT_EQ(markers[i].fill, CategoryColour(e.question_categories[i]));
    EXPECT_NE(markers[i].stroke, kUnknownCategoryColour);
    // At the x of the step of the evaluation it was asked after.
    int k = e.asked_after[i];
    ASSERT_GE(k, e.first_correct);
    EXPECT_DOUBLE_EQ(markers[i].x, line.points[k - e.first_correct].first);
  }
  // The time plot marks the same questions in the same colours.
  std::vector<Marker> over_time = ParseMarkers(Svg(html, "plot-time"));
  ASSERT_EQ(over_time.size(), markers.size());
  for (size_t i = 0; i < markers.size(); ++i) EXPECT_EQ(over_time[i].stroke, markers[i].stroke);
  EXPECT_EQ(ParseStepLine(Svg(html, "plot-time")).steps, line.steps);
}

TEST(Report, LegendNamesEveryCategory) {
  Sample s;
  std::string svg = Svg(Render(s.summary, s.events, s.stats), "plot-evaluations");
  for (const std::string& category : LegendCategories()) {
    EXPECT_THAT(svg, HasSubstr(absl::StrCat("question: ", CategoryLabel(category))));
    EXPECT_THAT(svg, HasSubstr(absl::StrCat("fill=\"", CategoryColour(category), "\"")));
  }
}

TEST(Report, CategoryColoursCoverTheBankAndAreDistinct) {
  std::set<std::string> colours = {std::string(kBestLineColour), std::string(kEvaluationDotColour),
                                    std::string(kFailureColour), std::string(kGoalColour),
                                    std::string(kUnknownCategoryColour)};
  for (question_bank::Category c : question_bank::AllCategories()) {
    std::string name(question_bank::CategoryName(c));
    EXPECT_TRUE(colours.insert(std::string(CategoryColour(name))).second) << name;
  }
  EXPECT_TRUE(colours.insert(std::string(CategoryColour(kHumanCategory))).second);
  EXPECT_EQ(LegendCategories().size(), question_bank::AllCategories().size() + 1);
}

TEST(Report, TablesHaveARowPerEvaluationQuestionAndStatistic) {
  Sample s;
  Expected e = Expect(s.events);
  std::string html = Render(s.summary, s.events, s.stats);
  // Header row + one row per item.
  EXPECT_EQ(Count(Table(html, "evaluations"), "<tr"), e.evaluations + 1);
  EXPECT_EQ(Count(Table(html, "questions"), "<tr"), static_cast<int>(e.question_categories.size()) + 1);
  EXPECT_EQ(Count(Table(html, "statistics"), "<tr"), static_cast<int>(s.stats.size()) + 1);
  EXPECT_EQ(Count(Table(html, "turns"), "<tr"), static_cast<int>(e.turns.size()) + 1);
  EXPECT_EQ(Count(Table(html, "evaluations"), "did not compile"), 2);
  // The statistics' median gain, and "—" for a question with none.
  EXPECT_THAT(Table(html, "statistics"), HasSubstr(FormatGain(s.stats[0]["median_gain"].get<double>())));
  EXPECT_THAT(Table(html, "statistics"), HasSubstr("<td class=\"num\">—</td>"));
}

TEST(Report, QuestionsShowTheBestBeforeAndAfter) {
  std::vector<json> events = {
      {{"kind", "evaluation"}, {"time_ms", 1000}, {"all_correct", true}, {"compiled", true},
       {"correct", 4}, {"total", 4}, {"geomean_speedup", 0.5}},
      {{"kind", "question"}, {"time_ms", 2000}, {"source", "bank"}, {"question_id", "q-a"},
       {"category", "scope"}, {"text", "Which?"}},
      {{"kind", "evaluation"}, {"time_ms", 3000}, {"all_correct", true}, {"compiled", true},
       {"correct", 4}, {"total", 4}, {"geomean_speedup", 0.6}},
      {{"kind", "question"}, {"time_ms", 4000}, {"source", "self"}, {"question_id", "q-b"},
       {"category", "first_principles"}, {"text", "What?"}},
  };
  std::string table = Table(Render(json::object(), events, nullptr), "questions");
  EXPECT_THAT(table, HasSubstr("<td class=\"num\">0.500x</td><td class=\"num\">0.600x</td>"
                               "<td class=\"num\">+20.0%</td>"));
  EXPECT_THAT(table, HasSubstr("<td class=\"num\">0.600x</td><td class=\"num\">0.600x</td>"
                               "<td class=\"num\">+0.0%</td>"));
}

// Every text field of every kind, summary and statistics, set to `text`.
std::string RenderWithEverywhere(const std::string& text) {
  json summary = {{"session_id", text}, {"task", text}, {"target", text}, {"agent", text},
                  {"state", text}, {"goal_speedup", 1.1}, {"created_ms", 1000}};
  std::vector<json> events = {
      {{"kind", "state"}, {"time_ms", 1000}, {"state", text}, {"reason", text}},
      {{"kind", "turn_start"}, {"time_ms", 1000}, {"turn", 1}, {"prompt", text}},
      {{"kind", "agent_message"}, {"time_ms", 1500}, {"text", text}},
      {{"kind", "evaluation"}, {"time_ms", 2000}, {"evaluation_id", text}, {"by", text},
       {"compiled", true}, {"all_correct", true}, {"correct", 1}, {"total", 1},
       {"geomean_speedup", 0.9}},
      {{"kind", "verification"}, {"time_ms", 2100}, {"evaluation_id", text}, {"goal_met", false},
       {"reason", text}},
      {{"kind", "question"}, {"time_ms", 3000}, {"source", "bank"}, {"question_id", text},
       {"text", text}, {"category", text}, {"reason", text}},
      {{"kind", "question"}, {"time_ms", 3100}, {"source", text}, {"question_id", ""},
       {"text", text}, {"category", ""}, {"reason", text}},
      {{"kind", "turn_end"}, {"time_ms", 4000}, {"turn", 1}, {"result", text}, {"is_error", true}},
  };
  json stats = json::array({{{"question_id", text}, {"text", text}, {"category", text},
                             {"asked", 1}, {"gains", 0}, {"median_gain", nullptr}}});
  return Render(summary, events, stats);
}

TEST(Report, EscapesEveryText) {
  std::string html = RenderWithEverywhere("<script>alert('x')</script>\"onmouseover=\"alert(1)&");
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("\"onmouseover")));
  EXPECT_THAT(html, Not(HasSubstr("'x'")));
  // summary x5 (+ title and h1), state reason, evaluation id via the
  // verification, questions x2 in two plots and the table, turn result,
  // statistics.
  EXPECT_GE(Count(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;onmouseover=&quot;"
                        "alert(1)&amp;"),
            15);
}

TEST(Report, ReplacesControlCharacters) {
  std::string html = RenderWithEverywhere(std::string("a\x01" "b\x7f" "c\0d", 7));
  EXPECT_THAT(html, Not(HasSubstr(std::string(1, '\0'))));
  EXPECT_THAT(html, Not(HasSubstr("\x01")));
  EXPECT_THAT(html, HasSubstr("a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD" "d"));
}

TEST(Report, EmptyTraceRenders) {
  std::string html = Render(json::object(), {}, nullptr);
  for (const char* id : {"plot-evaluations", "plot-time"}) {
    std::string svg = Svg(html, id);
    ASSERT_FALSE(svg.empty()) << id;
    EXPECT_FALSE(ParseStepLine(svg).present);
    EXPECT_THAT(svg, HasSubstr("no evaluations yet"));
    EXPECT_TRUE(ParseMarkers(svg).empty());
  }
  EXPECT_THAT(html, HasSubstr("No evaluation yet."));
  EXPECT_THAT(html, HasSubstr("No question was asked."));
  EXPECT_THAT(html, HasSubstr("<th>Best speedup (verified)</th><td>—</td>"));
  // A null summary is an empty one.
  EXPECT_TRUE(RenderSessionReport(nullptr, {}, json::array()).ok());
}

json Evaluation(int64_t time_ms, bool all_correct, json speedup,
                const std::string& by = "verification") {
  return {{"kind", "evaluation"}, {"time_ms", time_ms}, {"compiled", true}, {"by", by},
          {"all_correct", all_correct}, {"correct", all_correct ? 10 : 7}, {"total", 10},
          {"geomean_speedup", speedup}};
}

// The headline is the best verified speedup; the agent's own measurements
// are shown apart and marked, however much higher they are.
TEST(Report, HeadlineBestIsTheBestVerificationAndTheAgentsOwnIsMarked) {
  std::vector<json> events = {Evaluation(1000, true, 3.288, "agent"),
                              Evaluation(2000, true, 3.217, "verification"),
                              Evaluation(3000, true, 2.5, "verification")};
  std::string header = Table(Render(json::object(), events, nullptr), "summary");
  EXPECT_THAT(header, HasSubstr("<th>Best speedup (verified)</th><td>3.217x</td>"));
  EXPECT_THAT(header, HasSubstr("<th>Agent's own best (unverified)</th><td>3.288x"));
  std::string table = Table(Render(json::object(), events, nullptr), "evaluations");
  EXPECT_EQ(Count(table, "agent (unverified)"), 1);

  // Only the agent measured: no verified best at all.
  header = Table(Render(json::object(), {Evaluation(1000, true, 3.288, "agent")}, nullptr),
                 "summary");
  EXPECT_THAT(header, HasSubstr("<th>Best speedup (verified)</th><td>—</td>"));
}

TEST(Report, SessionWithoutACorrectEvaluation) {
  std::vector<json> events = {
      Evaluation(1000, false, nullptr), Evaluation(2000, false, nullptr),
      {{"kind", "question"}, {"time_ms", 2500}, {"source", "bank"}, {"category", "verifying_assumption"},
       {"question_id", "wrong-values-pattern"}, {"text", "Where?"}},
      Evaluation(3000, false, nullptr)};
  std::string html = Render(json{{"goal_speedup", 1.5}}, events, nullptr);
  std::string svg = Svg(html, "plot-evaluations");
  EXPECT_FALSE(ParseStepLine(svg).present);
  EXPECT_THAT(svg, HasSubstr("no correct evaluation yet"));
  EXPECT_EQ(Count(svg, "class=\"evaluation-failure\""), 3);
  ASSERT_EQ(ParseMarkers(svg).size(), 1u);
  EXPECT_EQ(ParseMarkers(svg)[0].stroke, CategoryColour("verifying_assumption"));
  EXPECT_THAT(html, HasSubstr("<th>Best speedup (verified)</th><td>—</td>"));
  EXPECT_EQ(Count(Table(html, "evaluations"), "class=\"not-correct\""), 3);
}

TEST(Report, SingleEvaluation) {
  std::string html = Render(json::object(), {Evaluation(5000, true, 0.8)}, nullptr);
  for (const char* id : {"plot-evaluations", "plot-time"}) {
    StepLine line = ParseStepLine(Svg(html, id));
    ASSERT_TRUE(line.present) << id;
    EXPECT_EQ(line.steps, 0) << id;
    EXPECT_EQ(line.points.size(), 1u) << id;
  }
  EXPECT_THAT(html, HasSubstr("<th>Best speedup (verified)</th><td>0.800x</td>"));
}

TEST(Report, NullAndNanSpeedupsAreNotCounted) {
  std::vector<json> events = {Evaluation(1000, true, 0.7), Evaluation(2000, true, nullptr),
                              Evaluation(3000, true, json(std::nan(""))),
                              Evaluation(4000, true, json(INFINITY)), Evaluation(5000, true, -1.0),
                              Evaluation(6000, false, 3.0), Evaluation(7000, true, 0.9)};
  std::string html = Render(json::object(), events, nullptr);
  std::string svg = Svg(html, "plot-evaluations");
  StepLine line = ParseStepLine(svg);
  EXPECT_EQ(line.steps, 6);
  EXPECT_EQ(Count(svg, "class=\"evaluation-dot\""), 2);
  EXPECT_EQ(Count(svg, "class=\"evaluation-failure\""), 5);
  EXPECT_THAT(html, HasSubstr("<th>Best speedup (verified)</th><td>0.900x</td>"));
  std::string lower = html;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_THAT(lower, Not(HasSubstr("nan")));
  EXPECT_THAT(lower, Not(HasSubstr("inf")));
  EXPECT_THAT(html, Not(HasSubstr("3.000x")));
}

TEST(Report, UnknownEventKindsAreSkipped) {
  std::vector<json> events = {{{"kind", "something_new"}, {"time_ms", 1}, {"correct", "x"}},
                              Evaluation(2, true, 1.2)};
  std::string html = Render(json::object(), events, nullptr);
  EXPECT_EQ(Count(Table(html, "evaluations"), "<tr"), 2);
}

TEST(Report, WrongTypesAreErrorsNamingTheField) {
  json bad = Evaluation(1000, true, 1.0);
  bad["correct"] = "10";
  absl::StatusOr<std::string> html =
      RenderSessionReport(json::object(), {Evaluation(500, true, 0.5), bad}, nullptr);
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(html.status().message(), HasSubstr("trace (evaluation event): events[1].correct"));
  EXPECT_THAT(html.status().message(), HasSubstr("correct: expected an integer, got a string"));

  html = RenderSessionReport(json::object(), {json::array()}, nullptr);
  EXPECT_THAT(html.status().message(), HasSubstr("events[0]: not a JSON object"));

  html = RenderSessionReport(json{{"goal_speedup", "fast"}}, {}, nullptr);
  EXPECT_THAT(html.status().message(), HasSubstr("session summary: goal_speedup: expected a number"));
  html = RenderSessionReport(json::array(), {}, nullptr);
  EXPECT_THAT(html.status().message(), HasSubstr("session summary: not a JSON object"));

  html = RenderSessionReport(json::object(), {}, json::object());
  EXPECT_THAT(html.status().message(), HasSubstr("question statistics: not a JSON list"));
  html = RenderSessionReport(json::object(), {}, json::array({{{"asked", 1.5}}}));
  EXPECT_THAT(html.status().message(), HasSubstr("question statistics: [0].asked: expected an integer"));
}

TEST(Report, LongAgentTextIsCutAtACharacter) {
  std::string result;
  for (int i = 0; i < 1000; ++i) result += "é";  // two bytes each
  std::vector<json> events = {{{"kind", "turn_start"}, {"time_ms", 1}, {"turn", 1}},
                              {{"kind", "turn_end"}, {"time_ms", 2}, {"turn", 1}, {"result", result}}};
  std::string turns = Table(Render(json::object(), events, nullptr), "turns");
  EXPECT_THAT(turns, HasSubstr("é…"));
  EXPECT_LT(turns.size(), result.size());
}

}  // namespace
}  // namespace kseek::report
