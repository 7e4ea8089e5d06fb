// Verdict statistics and JSON form (verdict.h).
#include "harness/src/verdict.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/json_reader.h"
#include "base/status_macros.h"

namespace kseek {

using nlohmann::json;

namespace {
const std::pair<ScenarioStatus, const char*> kStatusNames[] = {
    {ScenarioStatus::kOk, "ok"},
    {ScenarioStatus::kIncorrect, "incorrect"},
    {ScenarioStatus::kCrash, "crash"},
    {ScenarioStatus::kTimeout, "timeout"},
    {ScenarioStatus::kCompileError, "compile_error"},
    {ScenarioStatus::kPolicyViolation, "policy_violation"},
};
}  // namespace

std::string StatusName(ScenarioStatus s) {
  for (const auto& [status, name] : kStatusNames)
    if (status == s) return name;
  return "?";
}

absl::StatusOr<ScenarioStatus> ParseStatus(const std::string& name) {
  for (const auto& [status, n] : kStatusNames)
    if (name == n) return status;
  return absl::InvalidArgumentError(absl::StrCat("unknown scenario status '", name, "'"));
}

TimeStats Summarize(std::vector<double> samples) {
  TimeStats t;
  t.n = static_cast<int>(samples.size());
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  t.min = samples.front();
  t.max = samples.back();
  t.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  double sum = 0;
  for (double x : samples) sum += x;
  t.mean = sum / n;
  if (n > 1) {
    double ss = 0;
    for (double x : samples) ss += (x - t.mean) * (x - t.mean);
    t.stderr_ms = std::sqrt(ss / (n - 1)) / std::sqrt(static_cast<double>(n));
  }
  return t;
}

void Verdict::Finalize() {
  all_correct = !scenarios.empty() && error.empty();
  double log_sum = 0;
  int timed = 0;
  for (const auto& s : scenarios) {
    all_correct &= s.status == ScenarioStatus::kOk;
    if (s.speedup && *s.speedup > 0) {
      log_sum += std::log(*s.speedup);
      ++timed;
    }
  }
  geomean_speedup.reset();
  if (timed > 0) geomean_speedup = std::exp(log_sum / timed);
  goal_met = all_correct && geomean_speedup && *geomean_speedup >= goal_speedup;
}

json ToJson(const TimeStats& t) {
  return json{{"median", t.median}, {"mean", t.mean}, {"stderr", t.stderr_ms},
              {"min", t.min},       {"max", t.max},   {"n", t.n}};
}

namespace {
template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
}  // namespace

json ToJson(const ScenarioResult& s) {
  json outputs = json::array();
  for (const auto& o : s.outputs)
    outputs.push_back({{"tensor", o.tensor}, {"rel_l2", o.rel_l2}, {"max_abs", o.max_abs}, {"within", o.within}});
  json j = {{"index", s.index},
            {"name", s.name},
            {"params", s.params.is_null() ? json::object() : s.params},
            {"status", StatusName(s.status)},
            {"error", s.error},
            {"outputs", outputs},
            {"rel_l2", s.rel_l2},
            {"max_abs", s.max_abs},
            {"time_ms", s.time ? ToJson(*s.time) : json(nullptr)},
            {"baseline_ms", s.baseline ? json(s.baseline->median) : json(nullptr)},
            {"baseline_time_ms", s.baseline ? ToJson(*s.baseline) : json(nullptr)},
            {"speedup", OrNull(s.speedup)},
            {"tflops", OrNull(s.tflops)},
            {"gbps", OrNull(s.gbps)},
            {"flag", s.flag}};
  if (s.cross_check) {
    j["cross_check"] = {{"candidate_excess_ms", s.cross_check->candidate_excess_ms},
                        {"baseline_excess_ms", s.cross_check->baseline_excess_ms},
                        {"allowed_ms", s.cross_check->allowed_ms},
                        {"measurements", s.cross_check->measurements}};
  }
  if (!s.phase_seconds.empty()) {
    json phases = json::object();
    for (const auto& [name, seconds] : s.phase_seconds) phases[name] = seconds;
    j["phase_seconds"] = phases;
  }
  return j;
}

json ToJson(const Verdict& v) {
  json scenarios = json::array();
  for (const auto& s : v.scenarios) scenarios.push_back(ToJson(s));
  const DeviceInfo& d = v.device;
  return json{
      {"task", v.task},
      {"target", v.target},
      {"device", d.name},
      {"device_info",
       {{"name", d.name},
        {"cc", absl::StrCat(d.cc_major, ".", d.cc_minor)},
        {"sm_count", d.sm_count},
        {"memory_bytes", d.memory_bytes},
        {"l2_bytes", d.l2_bytes},
        {"sm_clock_mhz", d.sm_clock_mhz},
        {"mem_bandwidth_gbps", d.mem_bandwidth_gbps},
        {"driver", d.driver}}},
      {"seed", v.seed},
      {"all_correct", v.all_correct},
      {"geomean_speedup", OrNull(v.geomean_speedup)},
      {"goal", {{"speedup", v.goal_speedup}, {"met", v.goal_met}}},
      {"compile",
       {{"ok", v.compile.ok},
        {"cached", v.compile.cached},
        {"registers", v.compile.registers},
        {"smem_bytes", v.compile.smem_bytes},
        {"spill_bytes", v.compile.spill_bytes},
        {"stack_bytes", v.compile.stack_bytes},
        {"seconds", v.compile.seconds},
        {"command", v.compile.command},
        {"log", v.compile.log}}},
      {"error", v.error},
      {"scenarios", scenarios}};
}

namespace {

constexpr char kVerdictDocument[] = "verdict JSON";

// The optional fields of `r` read into `out`, which keeps its value for a
// missing one; a field of another type is r's status().
void ReadOptional(JsonReader& r, const char* key, std::optional<double>* out) {
  *out = r.OptionalNumber(key);
}

void ReadOptional(JsonReader& r, const char* key, int* out) {
  *out = static_cast<int>(r.IntOr(key, *out));
}

void ReadOptional(JsonReader& r, const char* key, int64_t* out) { *out = r.IntOr(key, *out); }

void ReadOptional(JsonReader& r, const char* key, double* out) { *out = r.NumberOr(key, *out); }

void ReadOptional(JsonReader& r, const char* key, bool* out) { *out = r.BoolOr(key, *out); }

void ReadOptional(JsonReader& r, const char* key, std::string* out) {
  *out = r.StringOr(key, std::move(*out));
}

absl::StatusOr<TimeStats> TimeStatsFrom(const JsonReader& r) {
  TimeStats t;
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  KSEEK_RETURN_IF_ERROR(r.Read("median", &t.median));
  KSEEK_RETURN_IF_ERROR(r.Read("mean", &t.mean));
  KSEEK_RETURN_IF_ERROR(r.Read("stderr", &t.stderr_ms));
  KSEEK_RETURN_IF_ERROR(r.Read("min", &t.min));
  KSEEK_RETURN_IF_ERROR(r.Read("max", &t.max));
  KSEEK_RETURN_IF_ERROR(r.Read("n", &t.n));
  return t;
}

absl::StatusOr<ScenarioResult::CrossCheck> CrossCheckFrom(const JsonReader& r) {
  ScenarioResult::CrossCheck x;
  KSEEK_RETURN_IF_ERROR(r.Read("candidate_excess_ms", &x.candidate_excess_ms));
  KSEEK_RETURN_IF_ERROR(r.Read("baseline_excess_ms", &x.baseline_excess_ms));
  KSEEK_RETURN_IF_ERROR(r.Read("allowed_ms", &x.allowed_ms));
  KSEEK_RETURN_IF_ERROR(r.Read("measurements", &x.measurements));
  return x;
}

absl::StatusOr<ScenarioResult> ScenarioResultFrom(JsonReader r) {
  ScenarioResult s;
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  KSEEK_RETURN_IF_ERROR(r.Read("index", &s.index));
  KSEEK_RETURN_IF_ERROR(r.Read("name", &s.name));
  KSEEK_ASSIGN_OR_RETURN(const std::string status, r.String("status"));
  KSEEK_ASSIGN_OR_RETURN(s.status, ParseStatus(status));
  ReadOptional(r, "error", &s.error);
  if (r.Has("params")) s.params = r.value()["params"];
  if (r.Has("outputs")) {
    KSEEK_ASSIGN_OR_RETURN(const JsonReader outputs, r.Array("outputs"));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const JsonReader o = outputs.Element(i);
      OutputError e;
      KSEEK_RETURN_IF_ERROR(o.Read("tensor", &e.tensor));
      KSEEK_RETURN_IF_ERROR(o.Read("rel_l2", &e.rel_l2));
      KSEEK_RETURN_IF_ERROR(o.Read("max_abs", &e.max_abs));
      KSEEK_RETURN_IF_ERROR(o.Read("within", &e.within));
      s.outputs.push_back(e);
    }
  }
  ReadOptional(r, "rel_l2", &s.rel_l2);
  ReadOptional(r, "max_abs", &s.max_abs);
  if (r.Has("time_ms")) {
    KSEEK_ASSIGN_OR_RETURN(s.time, TimeStatsFrom(*r.Field("time_ms")));
  }
  if (r.Has("baseline_time_ms")) {
    KSEEK_ASSIGN_OR_RETURN(s.baseline, TimeStatsFrom(*r.Field("baseline_time_ms")));
  }
  ReadOptional(r, "speedup", &s.speedup);
  ReadOptional(r, "tflops", &s.tflops);
  ReadOptional(r, "gbps", &s.gbps);
  ReadOptional(r, "flag", &s.flag);
  if (r.Has("cross_check")) {
    KSEEK_ASSIGN_OR_RETURN(const JsonReader cross_check, r.Object("cross_check"));
    KSEEK_ASSIGN_OR_RETURN(s.cross_check, CrossCheckFrom(cross_check));
  }
  if (r.Has("phase_seconds")) {
    KSEEK_ASSIGN_OR_RETURN(const JsonReader phases, r.Object("phase_seconds"));
    for (const auto& [name, unused] : phases.value().items()) {
      KSEEK_ASSIGN_OR_RETURN(s.phase_seconds[name], phases.Number(name));
    }
  }
  KSEEK_RETURN_IF_ERROR(r.status());
  return s;
}

absl::Status ReadDevice(JsonReader d, DeviceInfo* device) {
  ReadOptional(d, "name", &device->name);
  const std::string cc = d.StringOr("cc");
  if (!cc.empty()) sscanf(cc.c_str(), "%d.%d", &device->cc_major, &device->cc_minor);
  ReadOptional(d, "sm_count", &device->sm_count);
  ReadOptional(d, "memory_bytes", &device->memory_bytes);
  ReadOptional(d, "l2_bytes", &device->l2_bytes);
  ReadOptional(d, "sm_clock_mhz", &device->sm_clock_mhz);
  ReadOptional(d, "mem_bandwidth_gbps", &device->mem_bandwidth_gbps);
  ReadOptional(d, "driver", &device->driver);
  return d.status();
}

absl::Status ReadCompile(JsonReader c, CompileInfo* compile) {
  ReadOptional(c, "ok", &compile->ok);
  ReadOptional(c, "cached", &compile->cached);
  ReadOptional(c, "registers", &compile->registers);
  ReadOptional(c, "smem_bytes", &compile->smem_bytes);
  ReadOptional(c, "spill_bytes", &compile->spill_bytes);
  ReadOptional(c, "stack_bytes", &compile->stack_bytes);
  ReadOptional(c, "seconds", &compile->seconds);
  ReadOptional(c, "command", &compile->command);
  ReadOptional(c, "log", &compile->log);
  return c.status();
}

}  // namespace

absl::StatusOr<TimeStats> TimeStatsFromJson(const json& j) {
  return TimeStatsFrom(JsonReader(j, kVerdictDocument, "time_ms"));
}

absl::StatusOr<ScenarioResult> ScenarioResultFromJson(const json& j) {
  return ScenarioResultFrom(JsonReader(j, kVerdictDocument, "scenario"));
}

absl::StatusOr<Verdict> VerdictFromJson(const json& j) {
  Verdict v;
  JsonReader r(j, kVerdictDocument);
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  KSEEK_RETURN_IF_ERROR(r.Read("task", &v.task));
  KSEEK_RETURN_IF_ERROR(r.Read("target", &v.target));
  if (r.Has("device_info")) {
    KSEEK_ASSIGN_OR_RETURN(const JsonReader device, r.Object("device_info"));
    KSEEK_RETURN_IF_ERROR(ReadDevice(device, &v.device));
  }
  if (r.Has("seed")) KSEEK_RETURN_IF_ERROR(r.Read("seed", &v.seed));
  ReadOptional(r, "all_correct", &v.all_correct);
  ReadOptional(r, "geomean_speedup", &v.geomean_speedup);
  if (r.Has("goal")) {
    KSEEK_ASSIGN_OR_RETURN(JsonReader goal, r.Object("goal"));
    ReadOptional(goal, "speedup", &v.goal_speedup);
    ReadOptional(goal, "met", &v.goal_met);
    KSEEK_RETURN_IF_ERROR(goal.status());
  }
  if (r.Has("compile")) {
    KSEEK_ASSIGN_OR_RETURN(const JsonReader compile, r.Object("compile"));
    KSEEK_RETURN_IF_ERROR(ReadCompile(compile, &v.compile));
  }
  ReadOptional(r, "error", &v.error);
  KSEEK_RETURN_IF_ERROR(r.status());
  KSEEK_ASSIGN_OR_RETURN(const JsonReader scenarios, r.Array("scenarios"));
  for (size_t i = 0; i < scenarios.size(); ++i) {
    KSEEK_ASSIGN_OR_RETURN(ScenarioResult s, ScenarioResultFrom(scenarios.Element(i)));
    v.scenarios.push_back(std::move(s));
  }
  return v;
}

}  // namespace kseek
