#include "report_trace.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kseek::report {
namespace {

using nlohmann::json;

absl::string_view TypeName(const json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  return "null";
}

}  // namespace

FieldReader::FieldReader(const json& object, std::string where)
    : object_(object), where_(std::move(where)) {}

const json* FieldReader::Find(absl::string_view field) const {
  if (!object_.is_object()) return nullptr;
  auto it = object_.find(std::string(field));
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void FieldReader::WrongType(absl::string_view field, absl::string_view expected) {
  if (!status_.ok()) return;
  status_ = absl::InvalidArgumentError(absl::StrCat(where_, ": field '", field, "' is ",
                                                    TypeName(*Find(field)), ", expected ", expected));
}

std::string FieldReader::String(absl::string_view field) {
  const json* v = Find(field);
  if (v == nullptr) return "";
  if (!v->is_string()) {
    WrongType(field, "a string");
    return "";
  }
  return v->get<std::string>();
}

int64_t FieldReader::Int(absl::string_view field) {
  const json* v = Find(field);
  if (v == nullptr) return 0;
  if (v->is_number_integer()) return v->get<int64_t>();
  // 3.0 is an integer written as a float; 3.5 is not.
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<int64_t>(d);
    }
  }
  WrongType(field, "an integer");
  return 0;
}

bool FieldReader::Bool(absl::string_view field) {
  const json* v = Find(field);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    WrongType(field, "a boolean");
    return false;
  }
  return v->get<bool>();
}

std::optional<double> FieldReader::Number(absl::string_view field) {
  const json* v = Find(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    WrongType(field, "a number or null");
    return std::nullopt;
  }
  double d = v->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

namespace {

// The reader of one event: adds what the report draws to `trace`.
class TraceBuilder {
 public:
  absl::Status Add(const json& event, size_t i) {
    if (!event.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("events[", i, "]: not a JSON object"));
    }
    FieldReader head(event, absl::StrCat("events[", i, "]"));
    std::string kind = head.String("kind");
    int64_t time_ms = head.Int("time_ms");
    if (!head.status().ok()) return head.status();
    if (time_ms > 0) {
      trace_.first_ms = trace_.first_ms == 0 ? time_ms : std::min(trace_.first_ms, time_ms);
      trace_.last_ms = std::max(trace_.last_ms, time_ms);
    }
    FieldReader r(event, absl::StrCat("events[", i, "] (", kind, ")"));
    if (kind == "evaluation") {
      AddEvaluation(r, time_ms);
    } else if (kind == "verification") {
      AddVerification(r);
    } else if (kind == "question") {
      AddQuestion(r, time_ms);
    } else if (kind == "turn_start") {
      TurnRow turn;
      turn.turn = r.Int("turn");
      turn.start_ms = time_ms;
      turn.resumed = r.Bool("resumed");
      trace_.turns.push_back(std::move(turn));
    } else if (kind == "turn_end") {
      AddTurnEnd(r, time_ms);
    } else if (kind == "cost") {
      trace_.cost_usd += r.Number("usd").value_or(0);
      trace_.input_tokens += r.Int("input_tokens");
      trace_.output_tokens += r.Int("output_tokens");
    } else if (kind == "state") {
      trace_.last_state = r.String("state");
      trace_.last_state_reason = r.String("reason");
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
  void AddEvaluation(FieldReader& r, int64_t time_ms) {
    EvaluationRow row;
    row.number = static_cast<int>(trace_.evaluations.size()) + 1;
    row.time_ms = time_ms;
    row.evaluation_id = r.String("evaluation_id");
    row.by = r.String("by");
    row.compiled = r.Bool("compiled");
    row.all_correct = r.Bool("all_correct");
    row.correct = r.Int("correct");
    row.total = r.Int("total");
    std::optional<double> speedup = r.Number("geomean_speedup");
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

  void AddVerification(FieldReader& r) {
    std::string id = r.String("evaluation_id");
    bool goal_met = r.Bool("goal_met");
    std::string reason = r.String("reason");
    for (EvaluationRow& row : trace_.evaluations) {
      if (!id.empty() && row.evaluation_id == id) {
        row.verification = absl::StrCat(goal_met ? "goal met" : "goal not met",
                                        reason.empty() ? "" : ": ", reason);
      }
    }
  }

  void AddQuestion(FieldReader& r, int64_t time_ms) {
    AskedQuestion q;
    q.time_ms = time_ms;
    q.evaluations_before = static_cast<int>(trace_.evaluations.size());
    q.source = r.String("source");
    q.question_id = r.String("question_id");
    q.text = r.String("text");
    q.category = r.String("category");
    q.reason = r.String("reason");
    q.best_before = trace_.best;
    trace_.questions.push_back(std::move(q));
  }

  void AddTurnEnd(FieldReader& r, int64_t time_ms) {
    int64_t turn = r.Int("turn");
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
    open->is_error = r.Bool("is_error");
    open->result = r.String("result");
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
