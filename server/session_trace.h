// The session trace: building its events (JSON objects whose kinds and
// fields are documented in server/README.md, "The session trace"), and
// reading a trace back into what the question bank needs (the session's
// evaluations and the agent's words, the questions asked).
//
// Every builder returns {"kind": ..., "time_ms": now, fields...}; the store
// adds "session_id" and "index" when it appends the event. Pure functions
// (apart from reading the clock), thread-safe.
#ifndef KERNELSEEK_SERVER_SESSION_TRACE_H_
#define KERNELSEEK_SERVER_SESSION_TRACE_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernelseek/v1/evaluation.pb.h"
#include "kernelseek/v1/verdict.pb.h"
#include "nlohmann/json.hpp"
#include "question_bank/src/decision_points.h"
#include "question_bank/src/scheduler.h"
#include "question_bank/src/stats.h"
#include "server/agent/event.h"
#include "server/store.h"

namespace kseek::server {

nlohmann::json StateEvent(const std::string& state, const std::string& reason);
nlohmann::json TurnStartEvent(int turn, const std::string& prompt, bool resumed);
nlohmann::json TurnEndEvent(int turn, const std::string& result, bool is_error);
nlohmann::json HumanMessageEvent(const std::string& text, bool now);
nlohmann::json VerificationEvent(const std::string& evaluation_id, bool goal_met,
                                 std::optional<double> geomean, double goal,
                                 const std::string& reason);
nlohmann::json DecisionPointEvent(const std::vector<question_bank::FiredDecisionPoint>& points);
// source: "human", "bank" or "self".
nlohmann::json QuestionEvent(const std::string& source, const std::string& question_id,
                             const std::string& text, const std::string& category,
                             const std::string& reason);
nlohmann::json BestEvent(double geomean, const std::string& evaluation_id);

// The trace event of an agent's event (turn_end needs the turn number).
nlohmann::json AgentTraceEvent(const agent::AgentEvent& event, int turn);

// An evaluation's progress on its worker, for the trace of its session
// (`by`: "agent" or "verification"): `evaluation_started` when an attempt
// starts, and `scenario` for each scenario as it finishes (`done` of
// `total` in this attempt, this one included).
nlohmann::json EvaluationStartedEvent(const std::string& evaluation_id, const std::string& by,
                                      const kernelseek::v1::Started& started);
nlohmann::json ScenarioEvent(const std::string& evaluation_id, int attempt, int done, int total,
                             const kernelseek::v1::ScenarioResult& result);

// An `evaluation` event for a finished evaluation (`by`: "agent" or
// "verification"). A failed evaluation counts as not compiled.
struct EvaluationSummary {
  std::string evaluation_id;
  bool compiled = false;
  bool all_correct = false;
  int correct = 0;
  int total = 0;
  std::optional<double> geomean;  // only when all correct
  std::string kernel_sha256;
  std::string error;  // of a failed evaluation
};
EvaluationSummary SummarizeEvaluation(const EvaluationRecord& record);
nlohmann::json EvaluationTraceEvent(const EvaluationSummary& summary, const std::string& by);

// A session's trace, read for the scheduler and the statistics.
struct TraceView {
  question_bank::SessionHistory history;
  std::vector<question_bank::AskedQuestion> asked;  // in order, humans' too
  std::vector<std::string> asked_ids;               // "" for a human's
  std::vector<std::string> human_messages;          // every human_message text, in order
  int human_questions = 0;                          // human messages already asked
  absl::Time last_question_time = absl::InfinitePast();
  std::set<std::string> logged_evaluations;         // evaluation ids in the trace
};
TraceView ReadTrace(const std::vector<StoredEvent>& events);

// The question statistics over every session's trace, per bank question id
// (stats.h with a window of `window` evaluations and gains of at least
// `min_gain`).
std::map<std::string, question_bank::QuestionStats> QuestionStatsFromEvents(
    const std::vector<StoredEvent>& events, int window, double min_gain);

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_SESSION_TRACE_H_
