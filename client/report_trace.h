// A session's trace as the report reads it: the evaluations with the best
// speedup so far, the questions asked with the best speedup before and after
// each, the turns, and the totals, taken from the trace events (the event
// schema of `kseek session trace`), read with base/json_reader.h: an error
// names the event and the field at fault.
//
// A speedup counts toward "best" only when its evaluation was all correct
// and it is a finite number > 0; null, NaN or a missing speedup is "none".
// Event kinds the report does not draw are skipped, so a newer trace still
// renders. Plain values and pure functions; thread-safe.
#ifndef KERNELSEEK_CLIENT_REPORT_TRACE_H_
#define KERNELSEEK_CLIENT_REPORT_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kseek::report {

struct EvaluationRow {
  int number = 0;         // 1-based, in trace order
  int64_t time_ms = 0;
  std::string evaluation_id;
  std::string by;         // "agent" or "verification"
  bool compiled = false;
  bool all_correct = false;
  int64_t correct = 0;
  int64_t total = 0;
  std::optional<double> speedup;      // counted speedup (see above)
  std::optional<double> best_so_far;  // after this evaluation
  std::string verification;           // the verification's verdict, if any
};

struct AskedQuestion {
  int64_t time_ms = 0;
  int evaluations_before = 0;   // evaluations in the trace before it
  std::string source;           // "human", "bank" or "self"
  std::string question_id;
  std::string text;
  std::string category;         // as in the trace ("" for a human)
  std::string reason;
  std::optional<double> best_before;  // best so far when asked
  std::optional<double> best_after;   // best before the next question or the end
};

struct TurnRow {
  int64_t turn = 0;
  int64_t start_ms = 0;
  std::optional<int64_t> end_ms;
  bool resumed = false;
  bool is_error = false;
  std::string result;
};

struct SessionTrace {
  int64_t first_ms = 0;  // time of the first event (0 when none)
  int64_t last_ms = 0;   // time of the last event
  std::vector<EvaluationRow> evaluations;
  std::vector<AskedQuestion> questions;
  std::vector<TurnRow> turns;
  int human_messages = 0;
  double cost_usd = 0;  // the sum of the cost events (each one run's totals)
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::string last_state;         // of the last state event
  std::string last_state_reason;
  std::optional<double> best;     // best counted speedup of all evaluations
  // The same, of the coordinator's verifications only: the report's
  // headline. The agents' own evaluations are kept apart (unverified).
  std::optional<double> best_verified;
  std::optional<double> best_by_agent;
};

// Reads `events` in the order given. Errors name the event: "events[7]
// (evaluation): field 'correct' is a string, expected an integer".
absl::StatusOr<SessionTrace> ReadTrace(const std::vector<nlohmann::json>& events);

}  // namespace kseek::report

#endif  // KERNELSEEK_CLIENT_REPORT_TRACE_H_
