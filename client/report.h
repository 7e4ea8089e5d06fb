// The session report (`kseek session report`): one self-contained HTML page
// (inline CSS, inline SVG plots, no script, no external font, image or
// style) that shows a session's header and totals, its best speedup over
// evaluations and over time with every question marked by category, the
// evaluation table, the questions asked with the best speedup before and
// after each, the turns, and the question statistics across sessions.
//
// Every text from the trace, the summary or the statistics is HTML-escaped.
// Pure function; thread-safe.
#ifndef KERNELSEEK_CLIENT_REPORT_H_
#define KERNELSEEK_CLIENT_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace kseek::report {

// session_summary: {session_id, task, target, agent, goal_speedup, state,
//   created_ms, best_speedup}; missing or null fields are shown as "—".
// events: the session's trace events in trace order (kseek session trace).
// question_stats: a list of {question_id, text, category, asked, gains,
//   median_gain}, or null for none.
// INVALID_ARGUMENT, naming the object and field, when a field has the wrong
// type or question_stats is not a list.
absl::StatusOr<std::string> RenderSessionReport(const nlohmann::json& session_summary,
                                                const std::vector<nlohmann::json>& events,
                                                const nlohmann::json& question_stats);

}  // namespace kseek::report

#endif  // KERNELSEEK_CLIENT_REPORT_H_
