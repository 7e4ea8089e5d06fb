#include "client/report_trace.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/json_reader.h"

namespace kseek::report {
using nlohmann::json;

namespace {

// The reader of one event: adds what the report draws to `trace`.
class TraceBuilder {
 public:
  absl::Status Add(const json& event, size_t i) {
    if (!event.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("events[", i, "]: not a JSON object"));
    }
    const std::string path = absl::StrCat("events[", i, "]");
    JsonReader head(event, "trace", path);
    std::string kind = head.StringOr("kind");
    int64_t time_ms = head.IntOr("time_ms");
    if (!head.status().ok()) return head.status();
    if (time_ms > 0) {
      trace_.first_ms = trace_.first_ms == 0 ? time_ms : std::min(trace_.first_ms, time_ms);
      trace_.last_ms = std::max(trace_.last_ms, time_ms);
    }
    JsonReader r(event, absl::StrCat("trace (", kind, " event)"), path);
    if (kind == "evaluation") {
      AddEvaluation(r, time_ms);
    } else if (kind == "verification") {
      AddVerification(r);
    } else if (kind == "question") {
      AddQuestion(r, time_ms);
    } else if (kind == "turn_start") {
      TurnRow turn;
      turn.turn = r.IntOr("turn");
      turn.start_ms = time_ms;
      turn.resumed = r.BoolOr("resumed");
      trace_.turns.push_back(std::move(turn));
    } else if (kind == "turn_end") {
      AddTurnEnd(r, time_ms);
    } else if (kind == "cost") {
      trace_.cost_usd += r.OptionalNumber("usd").value_or(0);
      trace_.input_tokens += r.IntOr("input_tokens");
      trace_.output_tokens += r.IntOr("output_tokens");
    } else if (kind == "state") {
      trace_.last_state = r.StringOr("state");
      trace_.last_state_reason = r.StringOr("reason");
    } else if (kind == "human_message") {
      ++trace_.human_messages;
    }
    return r.status();
  }

  SessionTrace Finish() && {
    std::vector<AskedQuestion>& questions = trace_.questions;
    for (size_t k = 0; k < questions.size(); ++k) {
      size_t end = k + 1 < questions.size() ? questions[k + 1].evaluations_before
                                            : trace_.evaluations.size();
      if (end > 0) questions[k].best_after = trace_.evaluations[end - 1].best_so_far;
    }
    return std::move(trace_);
  }

 private:
  void AddEvaluation(JsonReader& r, int64_t time_ms) {
    EvaluationRow row;
    row.number = static_cast<int>(trace_.evaluations.size()) + 1;
    row.time_ms = time_ms;
    row.evaluation_id = r.StringOr("evaluation_id");
    row.by = r.StringOr("by");
    row.compiled = r.BoolOr("compiled");
    row.all_correct = r.BoolOr("all_correct");
    row.correct = r.IntOr("correct");
    row.total = r.IntOr("total");
    std::optional<double> speedup = r.OptionalNumber("geomean_speedup");
    if (row.all_correct && speedup.has_value() && *speedup > 0) row.speedup = speedup;
    const auto raise = [&row](std::optional<double>* best) {
      if (row.speedup.has_value() && (!best->has_value() || *row.speedup > **best)) {
        *best = row.speedup;
      }
    };
    raise(&trace_.best);
    if (row.by == "verification") raise(&trace_.best_verified);
    if (row.by == "agent") raise(&trace_.best_by_agent);
    row.best_so_far = trace_.best;
    trace_.evaluations.push_back(std::move(row));
  }

  void AddVerification(JsonReader& r) {
    std::string id = r.StringOr("evaluation_id");
    bool goal_met = r.BoolOr("goal_met");
    std::string reason = r.StringOr("reason");
    for (EvaluationRow& row : trace_.evaluations) {
      if (!id.empty() && row.evaluation_id == id) {
        row.verification = absl::StrCat(goal_met ? "goal met" : "goal not met",
                                        reason.empty() ? "" : ": ", reason);
      }
    }
  }

  void AddQuestion(JsonReader& r, int64_t time_ms) {
    AskedQuestion q;
    q.time_ms = time_ms;
    q.evaluations_before = static_cast<int>(trace_.evaluations.size());
    q.source = r.StringOr("source");
    q.question_id = r.StringOr("question_id");
    q.text = r.StringOr("text");
    q.category = r.StringOr("category");
    q.reason = r.StringOr("reason");
    q.best_before = trace_.best;
    trace_.questions.push_back(std::move(q));
  }

  void AddTurnEnd(JsonReader& r, int64_t time_ms) {
    int64_t turn = r.IntOr("turn");
    auto open = std::find_if(trace_.turns.rbegin(), trace_.turns.rend(), [&](const TurnRow& t) {
      return t.turn == turn && !t.end_ms.has_value();
    });
    if (open == trace_.turns.rend()) {
      TurnRow row;
      row.turn = turn;
      row.start_ms = time_ms;
      trace_.turns.push_back(std::move(row));
      open = trace_.turns.rbegin();
    }
    open->end_ms = time_ms;
    open->is_error = r.BoolOr("is_error");
    open->result = r.StringOr("result");
  }

  SessionTrace trace_;
};

}  // namespace

absl::StatusOr<SessionTrace> ReadTrace(const std::vector<json>& events) {
  TraceBuilder builder;
  for (size_t i = 0; i < events.size(); ++i) {
    absl::Status s = builder.Add(events[i], i);
    if (!s.ok()) return s;
  }
  return std::move(builder).Finish();
}

}  // namespace kseek::report
