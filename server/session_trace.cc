// Session trace events and reading a trace back (see session_trace.h).
#include "server/session_trace.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/time.h"
#include "kernelseek/v1/evaluation.pb.h"
#include "kernelseek/v1/verdict.pb.h"
#include "server/agent/text.h"
#include "server/auth.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;
namespace qb = ::kseek::question_bank;

namespace {

nlohmann::json Base(const char* kind) {
  return {{"kind", kind}, {"time_ms", NowMs()}};
}

// What a trace keeps of a worker's text (a scenario's error, a device's
// name): the full text is in the evaluation's verdict.
constexpr size_t kMaxScenarioErrorBytes = 1000;

nlohmann::json OptionalNumber(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json StateEvent(const std::string& state, const std::string& reason) {
  nlohmann::json e = Base("state");
  e["state"] = state;
  e["reason"] = reason;
  return e;
}

nlohmann::json TurnStartEvent(int turn, const std::string& prompt, bool resumed) {
  nlohmann::json e = Base("turn_start");
  e["turn"] = turn;
  e["prompt"] = prompt;
  e["resumed"] = resumed;
  return e;
}

nlohmann::json TurnEndEvent(int turn, const std::string& result, bool is_error) {
  nlohmann::json e = Base("turn_end");
  e["turn"] = turn;
  e["result"] = result;
  e["is_error"] = is_error;
  return e;
}

nlohmann::json HumanMessageEvent(const std::string& text, bool now) {
  nlohmann::json e = Base("human_message");
  e["text"] = text;
  e["now"] = now;
  return e;
}

nlohmann::json VerificationEvent(const std::string& evaluation_id, bool goal_met,
                                 std::optional<double> geomean, double goal,
                                 const std::string& reason) {
  nlohmann::json e = Base("verification");
  e["evaluation_id"] = evaluation_id;
  e["goal_met"] = goal_met;
  e["geomean_speedup"] = OptionalNumber(geomean);
  e["goal_speedup"] = goal;
  e["reason"] = reason;
  return e;
}

nlohmann::json DecisionPointEvent(const std::vector<qb::FiredDecisionPoint>& points) {
  nlohmann::json e = Base("decision_point");
  e["points"] = nlohmann::json::array();
  e["reasons"] = nlohmann::json::array();
  for (const qb::FiredDecisionPoint& p : points) {
    e["points"].push_back(std::string(qb::DecisionPointName(p.point)));
    e["reasons"].push_back(p.detail);
  }
  return e;
}

nlohmann::json QuestionEvent(const std::string& source, const std::string& question_id,
                             const std::string& text, const std::string& category,
                             const std::string& reason) {
  nlohmann::json e = Base("question");
  e["source"] = source;
  e["question_id"] = question_id;
  e["text"] = text;
  e["category"] = category;
  e["reason"] = reason;
  return e;
}

nlohmann::json BestEvent(double geomean, const std::string& evaluation_id) {
  nlohmann::json e = Base("best");
  e["geomean_speedup"] = geomean;
  e["evaluation_id"] = evaluation_id;
  return e;
}

nlohmann::json AgentTraceEvent(const agent::AgentEvent& a, int turn) {
  using K = agent::AgentEventKind;
  switch (a.kind) {
    case K::kAgentMessage: {
      nlohmann::json e = Base("agent_message");
      e["text"] = a.text;
      return e;
    }
    case K::kToolCall: {
      nlohmann::json e = Base("tool_call");
      e["name"] = a.tool;
      e["input"] = a.input;
      return e;
    }
    case K::kToolResult: {
      nlohmann::json e = Base("tool_result");
      e["ok"] = a.ok;
      e["summary"] = a.text;
      return e;
    }
    case K::kError: {
      nlohmann::json e = Base("agent_error");
      e["message"] = a.text;
      e["error"] = std::string(agent::ErrorKindName(a.error));
      e["fatal"] = a.fatal;
      return e;
    }
    case K::kCost: {
      nlohmann::json e = Base("cost");
      e["usd"] = a.usd.value_or(0.0);
      e["input_tokens"] = a.input_tokens.value_or(0);
      e["output_tokens"] = a.output_tokens.value_or(0);
      return e;
    }
    case K::kAgentSessionId: {
      nlohmann::json e = Base("agent_session");
      e["agent_session_id"] = a.session_id;
      return e;
    }
    case K::kTurnEnd:
      return TurnEndEvent(turn, a.text, a.is_error);
  }
  return Base("agent_message");
}

nlohmann::json EvaluationStartedEvent(const std::string& evaluation_id, const std::string& by,
                                      const v1::Started& started) {
  nlohmann::json e = Base("evaluation_started");
  e["evaluation_id"] = evaluation_id;
  e["by"] = by;
  e["worker_id"] = started.worker_id();
  e["device"] = agent::Abbreviate(started.device(), kMaxScenarioErrorBytes);
  e["attempt"] = started.attempt();
  e["scenarios"] = started.scenarios();
  return e;
}

nlohmann::json ScenarioEvent(const std::string& evaluation_id, int attempt, int done, int total,
                             const v1::ScenarioResult& result) {
  nlohmann::json e = Base("scenario");
  e["evaluation_id"] = evaluation_id;
  e["attempt"] = attempt;
  e["done"] = done;
  e["total"] = total;
  e["name"] = agent::Abbreviate(result.name(), kMaxScenarioErrorBytes);
  e["status"] = agent::Abbreviate(result.status(), kMaxScenarioErrorBytes);
  e["speedup"] = result.has_speedup() ? nlohmann::json(result.speedup()) : nlohmann::json(nullptr);
  if (!result.error().empty()) e["error"] = agent::Abbreviate(result.error(), kMaxScenarioErrorBytes);
  return e;
}

EvaluationSummary SummarizeEvaluation(const EvaluationRecord& r) {
  EvaluationSummary s;
  s.evaluation_id = r.id;
  v1::EvaluationRequest request;
  // No request, no hash: an empty field rather than the hash of nothing.
  if (!r.request.empty() && request.ParseFromString(r.request) &&
      !request.kernel_source().empty()) {
    s.kernel_sha256 = HashToken(request.kernel_source());
  }
  if (r.state != kStateDone) {
    s.error = r.error.empty() ? absl::StrCat("evaluation ", r.state) : r.error;
    return s;
  }
  v1::Verdict verdict;
  if (!verdict.ParseFromString(r.verdict)) {
    s.error = "the stored verdict is corrupt";
    return s;
  }
  s.compiled = verdict.compile().ok();
  s.total = verdict.scenarios_size();
  for (const v1::ScenarioResult& sc : verdict.scenarios()) s.correct += sc.status() == "ok";
  s.all_correct = verdict.all_correct() && s.total > 0;
  if (s.all_correct && verdict.has_geomean_speedup()) s.geomean = verdict.geomean_speedup();
  s.error = verdict.error();
  return s;
}

nlohmann::json EvaluationTraceEvent(const EvaluationSummary& s, const std::string& by) {
  nlohmann::json e = Base("evaluation");
  e["evaluation_id"] = s.evaluation_id;
  e["by"] = by;
  e["compiled"] = s.compiled;
  e["all_correct"] = s.all_correct;
  e["correct"] = s.correct;
  e["total"] = s.total;
  e["geomean_speedup"] = OptionalNumber(s.geomean);
  e["kernel_sha256"] = s.kernel_sha256;
  if (!s.error.empty()) e["error"] = s.error;
  return e;
}

TraceView ReadTrace(const std::vector<StoredEvent>& events) {
  TraceView view;
  for (const StoredEvent& stored : events) {
    nlohmann::json e = nlohmann::json::parse(stored.json, nullptr, false);
    if (!e.is_object()) continue;
    absl::Time time = absl::FromUnixMillis(stored.time_ms);
    if (stored.kind == "evaluation") {
      qb::Evaluation ev;
      ev.index = static_cast<int64_t>(view.history.evaluations.size());
      ev.time = time;
      ev.compiled = e.value("compiled", false);
      ev.correct = e.value("all_correct", false);
      const nlohmann::json& g = e["geomean_speedup"];
      ev.speedup = g.is_number() ? g.get<double>() : 0.0;
      if (ev.correct && !g.is_number()) ev.correct = false;
      view.history.evaluations.push_back(ev);
      view.logged_evaluations.insert(e.value("evaluation_id", ""));
    } else if (stored.kind == "agent_message") {
      view.history.agent_messages.push_back({time, e.value("text", "")});
    } else if (stored.kind == "human_message") {
      view.human_messages.push_back(e.value("text", ""));
    } else if (stored.kind == "question") {
      std::string source = e.value("source", "");
      // A question the agent applied itself (self-ask) is scored like one
      // the scheduler asked.
      std::string id = source == "bank" || source == "self" ? e.value("question_id", "") : "";
      if (source == "human") ++view.human_questions;
      view.asked.push_back({id, static_cast<int64_t>(view.history.evaluations.size()) - 1});
      view.asked_ids.push_back(id);
      view.last_question_time = time;
    }
  }
  return view;
}

std::map<std::string, qb::QuestionStats> QuestionStatsFromEvents(
    const std::vector<StoredEvent>& events, int window, double min_gain) {
  std::vector<qb::AskRecord> records;
  size_t i = 0;
  while (i < events.size()) {
    size_t j = i;
    while (j < events.size() && events[j].session_id == events[i].session_id) ++j;
    TraceView view = ReadTrace(std::vector<StoredEvent>(events.begin() + i, events.begin() + j));
    for (qb::AskRecord& r : qb::BuildAskRecords(view.history.evaluations, view.asked, window)) {
      records.push_back(std::move(r));
    }
    i = j;
  }
  return qb::ComputeQuestionStats(records, min_gain);
}

}  // namespace kseek::server
