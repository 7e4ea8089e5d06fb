// Verdict statistics and JSON form (verdict.h).
#include "verdict.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

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

absl::Status Missing(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("verdict JSON: missing or malformed '", what, "'"));
}

template <typename T>
bool Get(const json& j, const char* key, T* out) {
  if (!j.is_object() || !j.contains(key)) return false;
  try {
    *out = j.at(key).get<T>();
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

template <typename T>
void GetOptional(const json& j, const char* key, std::optional<T>* out) {
  out->reset();
  if (j.is_object() && j.contains(key) && j.at(key).is_number()) *out = j.at(key).get<T>();
}

}  // namespace

absl::StatusOr<TimeStats> TimeStatsFromJson(const json& j) {
  TimeStats t;
  if (!Get(j, "median", &t.median) || !Get(j, "mean", &t.mean) || !Get(j, "stderr", &t.stderr_ms) ||
      !Get(j, "min", &t.min) || !Get(j, "max", &t.max) || !Get(j, "n", &t.n))
    return Missing("time_ms");
  return t;
}

absl::StatusOr<ScenarioResult> ScenarioResultFromJson(const json& j) {
  ScenarioResult s;
  std::string status;
  if (!Get(j, "index", &s.index)) return Missing("index");
  if (!Get(j, "name", &s.name)) return Missing("name");
  if (!Get(j, "status", &status)) return Missing("status");
  auto parsed = ParseStatus(status);
  if (!parsed.ok()) return parsed.status();
  s.status = *parsed;
  Get(j, "error", &s.error);
  if (j.contains("params")) s.params = j["params"];
  if (j.contains("outputs") && j["outputs"].is_array()) {
    for (const auto& o : j["outputs"]) {
      OutputError e;
      if (!Get(o, "tensor", &e.tensor) || !Get(o, "rel_l2", &e.rel_l2) || !Get(o, "max_abs", &e.max_abs) ||
          !Get(o, "within", &e.within))
        return Missing("outputs");
      s.outputs.push_back(e);
    }
  }
  Get(j, "rel_l2", &s.rel_l2);
  Get(j, "max_abs", &s.max_abs);
  if (j.contains("time_ms") && !j["time_ms"].is_null()) {
    auto t = TimeStatsFromJson(j["time_ms"]);
    if (!t.ok()) return t.status();
    s.time = *t;
  }
  if (j.contains("baseline_time_ms") && !j["baseline_time_ms"].is_null()) {
    auto t = TimeStatsFromJson(j["baseline_time_ms"]);
    if (!t.ok()) return t.status();
    s.baseline = *t;
  }
  GetOptional(j, "speedup", &s.speedup);
  GetOptional(j, "tflops", &s.tflops);
  GetOptional(j, "gbps", &s.gbps);
  Get(j, "flag", &s.flag);
  if (j.contains("cross_check") && j["cross_check"].is_object()) {
    const json& c = j["cross_check"];
    ScenarioResult::CrossCheck x;
    if (!Get(c, "candidate_excess_ms", &x.candidate_excess_ms) ||
        !Get(c, "baseline_excess_ms", &x.baseline_excess_ms) ||
        !Get(c, "allowed_ms", &x.allowed_ms) || !Get(c, "measurements", &x.measurements)) {
      return Missing("cross_check");
    }
    s.cross_check = x;
  }
  if (j.contains("phase_seconds") && j["phase_seconds"].is_object()) {
    for (const auto& [name, seconds] : j["phase_seconds"].items()) {
      if (!seconds.is_number()) return Missing("phase_seconds");
      s.phase_seconds[name] = seconds.get<double>();
    }
  }
  return s;
}

absl::StatusOr<Verdict> VerdictFromJson(const json& j) {
  Verdict v;
  if (!Get(j, "task", &v.task)) return Missing("task");
  if (!Get(j, "target", &v.target)) return Missing("target");
  if (j.contains("device_info")) {
    const json& d = j["device_info"];
    Get(d, "name", &v.device.name);
    std::string cc;
    if (Get(d, "cc", &cc)) sscanf(cc.c_str(), "%d.%d", &v.device.cc_major, &v.device.cc_minor);
    Get(d, "sm_count", &v.device.sm_count);
    Get(d, "memory_bytes", &v.device.memory_bytes);
    Get(d, "l2_bytes", &v.device.l2_bytes);
    Get(d, "sm_clock_mhz", &v.device.sm_clock_mhz);
    Get(d, "mem_bandwidth_gbps", &v.device.mem_bandwidth_gbps);
    Get(d, "driver", &v.device.driver);
  }
  Get(j, "seed", &v.seed);
  Get(j, "all_correct", &v.all_correct);
  GetOptional(j, "geomean_speedup", &v.geomean_speedup);
  if (j.contains("goal")) {
    Get(j["goal"], "speedup", &v.goal_speedup);
    Get(j["goal"], "met", &v.goal_met);
  }
  if (j.contains("compile")) {
    const json& c = j["compile"];
    Get(c, "ok", &v.compile.ok);
    Get(c, "cached", &v.compile.cached);
    Get(c, "registers", &v.compile.registers);
    Get(c, "smem_bytes", &v.compile.smem_bytes);
    Get(c, "spill_bytes", &v.compile.spill_bytes);
    Get(c, "stack_bytes", &v.compile.stack_bytes);
    Get(c, "seconds", &v.compile.seconds);
    Get(c, "command", &v.compile.command);
    Get(c, "log", &v.compile.log);
  }
  Get(j, "error", &v.error);
  if (!j.contains("scenarios") || !j["scenarios"].is_array()) return Missing("scenarios");
  for (const auto& s : j["scenarios"]) {
    auto r = ScenarioResultFromJson(s);
    if (!r.ok()) return r.status();
    v.scenarios.push_back(std::move(*r));
  }
  return v;
}

}  // namespace kseek
