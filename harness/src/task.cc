// Loading and validating task.json (format: harness/README.md).
#include "harness/src/task.h"

#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_reader.h"
#include "base/status_macros.h"

namespace kseek {

using nlohmann::json;

std::string TargetName(Target t) {
  switch (t) {
    case Target::kSm90a: return "sm_90a";
    case Target::kSm100a: return "sm_100a";
    case Target::kHost: return "host";
  }
  return "?";
}

absl::StatusOr<Target> ParseTarget(const std::string& name) {
  if (name == "sm_90a") return Target::kSm90a;
  if (name == "sm_100a") return Target::kSm100a;
  if (name == "host") return Target::kHost;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown target '", name, "' (expected sm_90a, sm_100a or host)"));
}

std::string TargetFamily(Target t) { return t == Target::kHost ? "host" : "cuda"; }

namespace {
const std::vector<std::pair<kseek_dtype, std::string>>& DtypeNames() {
  static const auto* names = new std::vector<std::pair<kseek_dtype, std::string>>{
      {KSEEK_F32, "f32"}, {KSEEK_F16, "f16"}, {KSEEK_BF16, "bf16"}, {KSEEK_F64, "f64"},
      {KSEEK_I32, "i32"}, {KSEEK_I64, "i64"}, {KSEEK_U8, "u8"}};
  return *names;
}
}  // namespace

std::string DtypeName(kseek_dtype d) {
  for (const auto& [value, name] : DtypeNames())
    if (value == d) return name;
  return "?";
}

absl::StatusOr<kseek_dtype> ParseDtype(const std::string& name) {
  for (const auto& [value, n] : DtypeNames())
    if (n == name) return value;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (expected f32, f16, bf16, f64, i32, i64 or u8)"));
}

const ParamSpec* TaskSpec::FindParam(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

bool TaskSpec::Supports(Target t) const {
  for (Target x : targets)
    if (x == t) return true;
  return false;
}

bool FamilySources::KernelRunsOn(const std::string& kernel, Target t) const {
  auto it = kernel_targets.find(kernel);
  if (it == kernel_targets.end()) return true;
  for (Target x : it->second)
    if (x == t) return true;
  return false;
}

bool Scenario::RunsOn(Target t) const {
  if (targets.empty()) return true;
  for (Target x : targets)
    if (x == t) return true;
  return false;
}

namespace {

// The non-empty strings of the array `r`.
absl::Status ParseStringList(const JsonReader& r, std::vector<std::string>* out) {
  if (!r.value().is_array()) return r.Error("expected an array of strings");
  for (size_t i = 0; i < r.size(); ++i) {
    const JsonReader item = r.Element(i);
    if (!item.value().is_string() || item.value().get<std::string>().empty())
      return item.Error("expected a non-empty string");
    out->push_back(item.value().get<std::string>());
  }
  return absl::OkStatus();
}

// An expression over the task's parameters: a string, or an integer where
// `allow_integer`.
absl::StatusOr<Expr> ParseExpr(const JsonReader& r, const TaskSpec& task, bool allow_integer,
                               const char* expected) {
  const json& v = r.value();
  std::string text = v.is_string()                            ? v.get<std::string>()
                     : allow_integer && v.is_number_integer() ? std::to_string(v.get<int64_t>())
                                                              : std::string();
  if (text.empty()) return r.Error(expected);
  auto e = Expr::Parse(text);
  if (!e.ok()) return r.Error(e.status().message());
  for (const auto& n : e->names())
    if (!task.FindParam(n)) return r.Error("unknown parameter '" + n + "'");
  return *e;
}

absl::Status ParseParams(const JsonReader& r, TaskSpec* task) {
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  if (r.size() == 0) return r.Error("a task needs at least one parameter");
  for (const auto& [name, unused] : r.value().items()) {
    if (ParseDtype(name).ok()) return r.FieldError(name, "a parameter may not be named like a dtype");
    bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char ch : name) identifier &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    if (!identifier) return r.FieldError(name, "a parameter name must be an identifier");
    KSEEK_ASSIGN_OR_RETURN(const JsonReader spec, r.Object(name));
    KSEEK_RETURN_IF_ERROR(spec.ExpectKeys({"dtype", "min", "max", "multiple_of", "description"}));
    ParamSpec p;
    p.name = name;
    if (spec.Has("dtype")) {
      p.is_dtype = true;
      const JsonReader list = *spec.Field("dtype");
      if (!list.value().is_array() || list.size() == 0)
        return list.Error("expected a non-empty array of dtype names");
      for (size_t i = 0; i < list.size(); ++i) {
        KSEEK_ASSIGN_OR_RETURN(const std::string dtype, list.Element(i).AsString());
        auto d = ParseDtype(dtype);
        if (!d.ok()) return list.Element(i).Error(d.status().message());
        p.allowed_dtypes.push_back(*d);
      }
    }
    for (const char* bound : {"min", "max"}) {
      if (!spec.Has(bound)) continue;
      if (p.is_dtype) return spec.FieldError(bound, "a dtype parameter has no bounds");
      KSEEK_ASSIGN_OR_RETURN((std::string(bound) == "min" ? p.min : p.max), spec.Int(bound));
    }
    if (spec.Has("multiple_of")) {
      if (p.is_dtype) return spec.FieldError("multiple_of", "a dtype parameter has no multiple_of");
      absl::StatusOr<int64_t> m = spec.Int("multiple_of");
      if (!m.ok() || *m < 1) return spec.FieldError("multiple_of", "expected a positive integer");
      p.multiple_of = *m;
    }
    task->params.push_back(std::move(p));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tolerance> ParseTolerance(const JsonReader& r) {
  KSEEK_RETURN_IF_ERROR(r.ExpectKeys({"rel_l2", "max_abs"}));
  Tolerance t;
  for (const char* key : {"rel_l2", "max_abs"}) {
    KSEEK_ASSIGN_OR_RETURN(const double v, r.Number(key));
    if (v < 0) return r.FieldError(key, "must not be negative");
    (std::string(key) == "rel_l2" ? t.rel_l2 : t.max_abs) = v;
  }
  return t;
}

absl::Status ParseInit(const JsonReader& r, TensorSpec* spec) {
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  KSEEK_ASSIGN_OR_RETURN(const std::string dist, r.String("dist"));
  std::pair<const char*, const char*> keys;
  if (dist == "normal") {
    spec->init.kind = Distribution::kNormal;
    keys = {"mean", "std"};
  } else if (dist == "uniform") {
    spec->init.kind = Distribution::kUniform;
    keys = {"low", "high"};
  } else {
    return r.FieldError("dist", "expected \"normal\" or \"uniform\", got \"" + dist + "\"");
  }
  KSEEK_RETURN_IF_ERROR(r.ExpectKeys({"dist", keys.first, keys.second}));
  KSEEK_ASSIGN_OR_RETURN(spec->init.a, r.Number(keys.first));
  KSEEK_ASSIGN_OR_RETURN(spec->init.b, r.Number(keys.second));
  if (spec->init.kind == Distribution::kNormal && spec->init.b <= 0)
    return r.FieldError("std", "must be positive");
  if (spec->init.kind == Distribution::kUniform && spec->init.b <= spec->init.a)
    return r.FieldError("high", "must be greater than low");
  return absl::OkStatus();
}

// An output's tolerance: one for every dtype, or one per dtype name ("*"
// for the others).
absl::Status ParseTolerances(const JsonReader& r, TensorSpec* spec) {
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  if (r.Has("rel_l2") || r.Has("max_abs")) {
    KSEEK_ASSIGN_OR_RETURN(spec->tolerance["*"], ParseTolerance(r));
    return absl::OkStatus();
  }
  for (const auto& [key, unused] : r.value().items()) {
    if (key != "*" && !ParseDtype(key).ok()) return r.FieldError(key, "expected a dtype name or \"*\"");
    KSEEK_ASSIGN_OR_RETURN(const JsonReader one, r.Object(key));
    KSEEK_ASSIGN_OR_RETURN(spec->tolerance[key], ParseTolerance(one));
  }
  if (spec->tolerance.empty()) return r.Error("empty");
  return absl::OkStatus();
}

absl::StatusOr<TensorSpec> ParseTensor(const JsonReader& t, const TaskSpec& task) {
  KSEEK_RETURN_IF_ERROR(t.ExpectObject());
  KSEEK_RETURN_IF_ERROR(
      t.ExpectKeys({"name", "role", "dtype", "shape", "init", "tolerance", "description"}));
  TensorSpec spec;
  KSEEK_ASSIGN_OR_RETURN(spec.name, t.String("name"));
  KSEEK_ASSIGN_OR_RETURN(const std::string role, t.String("role"));
  if (role == "in") spec.role = TensorRole::kIn;
  else if (role == "out") spec.role = TensorRole::kOut;
  else if (role == "scratch") spec.role = TensorRole::kScratch;
  else return t.FieldError("role", "expected \"in\", \"out\" or \"scratch\", got \"" + role + "\"");

  KSEEK_ASSIGN_OR_RETURN(const std::string dtype, t.String("dtype"));
  if (auto fixed = ParseDtype(dtype); fixed.ok()) {
    spec.fixed_dtype = *fixed;
  } else {
    const ParamSpec* p = task.FindParam(dtype);
    if (p == nullptr || !p->is_dtype)
      return t.FieldError("dtype", "'" + dtype + "' is neither a dtype nor a dtype parameter");
    spec.dtype_param = dtype;
  }

  KSEEK_ASSIGN_OR_RETURN(const JsonReader shape, t.Field("shape"));
  if (!shape.value().is_array() || shape.size() == 0 || shape.size() > KSEEK_MAX_DIMS)
    return shape.Error(absl::StrCat("expected an array of 1 to ", KSEEK_MAX_DIMS, " expressions"));
  for (size_t d = 0; d < shape.size(); ++d) {
    KSEEK_ASSIGN_OR_RETURN(Expr e, ParseExpr(shape.Element(d), task, /*allow_integer=*/true,
                                             "expected an expression string or an integer"));
    spec.shape.push_back(std::move(e));
  }

  if (t.Has("init")) {
    if (spec.role != TensorRole::kIn) return t.FieldError("init", "only inputs have an init");
    KSEEK_RETURN_IF_ERROR(ParseInit(*t.Field("init"), &spec));
  }
  if (spec.role == TensorRole::kOut) {
    if (!t.Has("tolerance")) return t.FieldError("tolerance", "missing (every output needs one)");
    KSEEK_RETURN_IF_ERROR(ParseTolerances(*t.Field("tolerance"), &spec));
  } else if (t.Has("tolerance")) {
    return t.FieldError("tolerance", "only outputs have a tolerance");
  }
  return spec;
}

absl::Status ParseTensors(const JsonReader& r, TaskSpec* task) {
  KSEEK_RETURN_IF_ERROR(r.ExpectArray());
  if (r.size() == 0) return r.Error("a task needs at least one tensor");
  std::set<std::string> seen;
  bool any_out = false;
  for (size_t i = 0; i < r.size(); ++i) {
    KSEEK_ASSIGN_OR_RETURN(TensorSpec spec, ParseTensor(r.Element(i), *task));
    if (!seen.insert(spec.name).second)
      return r.Element(i).FieldError("name", "duplicate tensor name '" + spec.name + "'");
    any_out |= spec.role == TensorRole::kOut;
    task->tensors.push_back(std::move(spec));
  }
  if (!any_out) return r.Error("a task needs at least one output (role \"out\")");
  return absl::OkStatus();
}

// A source file named by `r`, relative to the task's folder.
absl::StatusOr<std::string> ResolveSource(const JsonReader& r, const TaskSpec& task) {
  const json& v = r.value();
  if (!v.is_string() || v.get<std::string>().empty()) return r.Error("expected a file name");
  std::string path = task.dir + "/" + v.get<std::string>();
  if (access(path.c_str(), R_OK) != 0) return r.Error("file not found: " + path);
  return path;
}

absl::Status ParseSources(const JsonReader& r, TaskSpec* task) {
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  for (const auto& [family, unused] : r.value().items()) {
    if (family != "cuda" && family != "host") return r.FieldError(family, "expected \"cuda\" or \"host\"");
    KSEEK_ASSIGN_OR_RETURN(const JsonReader value, r.Object(family));
    KSEEK_RETURN_IF_ERROR(value.ExpectKeys({"reference", "baseline", "kernels"}));
    FamilySources s;
    KSEEK_ASSIGN_OR_RETURN(const JsonReader reference, value.Field("reference"));
    KSEEK_ASSIGN_OR_RETURN(s.reference, ResolveSource(reference, *task));
    if (value.Has("baseline")) {
      KSEEK_ASSIGN_OR_RETURN(s.baseline, ResolveSource(*value.Field("baseline"), *task));
    }
    if (value.Has("kernels")) {
      const JsonReader ks = *value.Field("kernels");
      if (!ks.value().is_array()) return ks.Error("expected an array of file names");
      for (size_t i = 0; i < ks.size(); ++i) {
        // A file name, or {"file": NAME, "targets": [...]} for a kernel
        // that runs on some targets of the family only.
        const JsonReader entry = ks.Element(i);
        const bool restricted = entry.value().is_object();
        if (restricted) KSEEK_RETURN_IF_ERROR(entry.ExpectKeys({"file", "targets"}));
        JsonReader file = entry;
        if (restricted) {
          KSEEK_ASSIGN_OR_RETURN(file, entry.Field("file"));
        }
        KSEEK_ASSIGN_OR_RETURN(std::string k, ResolveSource(file, *task));
        s.kernels.push_back(k);
        if (!restricted) continue;
        KSEEK_ASSIGN_OR_RETURN(const JsonReader list, entry.Field("targets"));
        std::vector<std::string> names;
        KSEEK_RETURN_IF_ERROR(ParseStringList(list, &names));
        for (size_t n = 0; n < names.size(); ++n) {
          auto t = ParseTarget(names[n]);
          if (!t.ok()) return list.Element(n).Error(t.status().message());
          if (TargetFamily(*t) != family)
            return list.Element(n).Error("target " + names[n] + " is not of family \"" + family + "\"");
          s.kernel_targets[k].push_back(*t);
        }
      }
    }
    task->sources[family] = std::move(s);
  }
  return absl::OkStatus();
}

// The value of parameter `p` in a scenario, as Scenario::params keeps it.
absl::StatusOr<int64_t> ParseParamValue(const JsonReader& r, const ParamSpec& p) {
  const json& value = r.value();
  if (p.is_dtype) {
    if (!value.is_string()) return r.Error("expected a dtype name");
    auto d = ParseDtype(value.get<std::string>());
    if (!d.ok()) return r.Error(d.status().message());
    bool allowed = false;
    for (auto a : p.allowed_dtypes) allowed |= a == *d;
    if (!allowed)
      return r.Error("dtype '" + value.get<std::string>() + "' is not allowed for this parameter");
    return static_cast<int64_t>(*d);
  }
  KSEEK_ASSIGN_OR_RETURN(const int64_t v, r.AsInt());
  if (p.min && v < *p.min) return r.Error(absl::StrCat(v, " is below the minimum ", *p.min));
  if (p.max && v > *p.max) return r.Error(absl::StrCat(v, " is above the maximum ", *p.max));
  if (p.multiple_of && v % *p.multiple_of != 0)
    return r.Error(absl::StrCat(v, " is not a multiple of ", *p.multiple_of));
  return v;
}

absl::StatusOr<Scenario> ParseScenario(const JsonReader& r, const TaskSpec& task) {
  KSEEK_RETURN_IF_ERROR(r.ExpectObject());
  KSEEK_RETURN_IF_ERROR(r.ExpectKeys({"name", "params", "targets", "description"}));
  Scenario s;
  KSEEK_ASSIGN_OR_RETURN(s.name, r.String("name"));
  if (s.name.empty()) return r.FieldError("name", "must not be empty");
  KSEEK_ASSIGN_OR_RETURN(const JsonReader params, r.Object("params"));
  for (const auto& [key, unused] : params.value().items()) {
    const ParamSpec* p = task.FindParam(key);
    if (p == nullptr) return params.FieldError(key, "not a parameter of task '" + task.name + "'");
    KSEEK_ASSIGN_OR_RETURN(s.params[key], ParseParamValue(*params.Field(key), *p));
  }
  for (const auto& p : task.params)
    if (!s.params.count(p.name)) return params.FieldError(p.name, "missing");
  if (r.Has("targets")) {
    const JsonReader list = *r.Field("targets");
    std::vector<std::string> names;
    KSEEK_RETURN_IF_ERROR(ParseStringList(list, &names));
    for (size_t i = 0; i < names.size(); ++i) {
      auto t = ParseTarget(names[i]);
      if (!t.ok()) return list.Element(i).Error(t.status().message());
      if (!task.Supports(*t)) return list.Element(i).Error("the task does not support target " + names[i]);
      s.targets.push_back(*t);
    }
  }
  // Every tensor must have a valid, positive shape in this scenario.
  for (const auto& t : task.tensors) {
    auto shape = TensorShape(t, s);
    if (!shape.ok()) return r.Error(absl::StrCat("tensor ", t.name, ": ", shape.status().message()));
  }
  return s;
}

// The optional object field `key` of `r`, checked against `allowed`;
// nothing when it is absent.
absl::StatusOr<std::optional<JsonReader>> OptionalSection(const JsonReader& r, const char* key,
                                                          const std::set<std::string>& allowed) {
  if (!r.Has(key)) return std::optional<JsonReader>();
  KSEEK_ASSIGN_OR_RETURN(JsonReader section, r.Object(key));
  KSEEK_RETURN_IF_ERROR(section.ExpectKeys(allowed));
  return std::optional<JsonReader>(std::move(section));
}

absl::Status ParsePolicyLimitsGoal(const JsonReader& r, TaskSpec* task) {
  KSEEK_ASSIGN_OR_RETURN(std::optional<JsonReader> policy,
                         OptionalSection(r, "policy", {"forbidden_includes", "forbidden_symbols"}));
  if (policy && policy->Has("forbidden_includes"))
    KSEEK_RETURN_IF_ERROR(ParseStringList(*policy->Field("forbidden_includes"),
                                          &task->policy.forbidden_includes));
  if (policy && policy->Has("forbidden_symbols"))
    KSEEK_RETURN_IF_ERROR(ParseStringList(*policy->Field("forbidden_symbols"),
                                          &task->policy.forbidden_symbols));

  KSEEK_ASSIGN_OR_RETURN(std::optional<JsonReader> limits,
                         OptionalSection(r, "limits", {"scenario_timeout_s", "job_timeout_s"}));
  for (const char* key : {"scenario_timeout_s", "job_timeout_s"}) {
    if (!limits || !limits->Has(key)) continue;
    KSEEK_ASSIGN_OR_RETURN(const double v, limits->Number(key));
    if (v <= 0) return limits->FieldError(key, "must be positive");
    (std::string(key) == "job_timeout_s" ? task->job_timeout_s : task->scenario_timeout_s) = v;
  }

  KSEEK_ASSIGN_OR_RETURN(std::optional<JsonReader> goal, OptionalSection(r, "goal", {"speedup"}));
  if (goal && goal->Has("speedup")) {
    KSEEK_ASSIGN_OR_RETURN(const double v, goal->Number("speedup"));
    if (v <= 0) return goal->FieldError("speedup", "must be positive");
    task->goal_speedup = v;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Scenario>> ParseScenarios(const TaskSpec& task, const json& j,
                                                     const std::string& origin) {
  const JsonReader root(j, origin);
  JsonReader list = root;
  if (j.is_object()) {
    KSEEK_ASSIGN_OR_RETURN(list, root.Field("scenarios"));
  }
  if (!list.value().is_array()) return list.Error("expected an array of scenarios");
  std::vector<Scenario> out;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    KSEEK_ASSIGN_OR_RETURN(Scenario s, ParseScenario(list.Element(i), task));
    if (!names.insert(s.name).second)
      return list.Element(i).FieldError("name", "duplicate scenario name '" + s.name + "'");
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<TaskSpec> LoadTask(const std::string& dir_in) {
  TaskSpec task;
  char resolved[4096];
  if (realpath(dir_in.c_str(), resolved) == nullptr)
    return absl::NotFoundError(absl::StrCat(dir_in, ": no such task folder"));
  task.dir = resolved;
  task.file = task.dir + "/task.json";
  KSEEK_ASSIGN_OR_RETURN(const json j, ReadJsonFile(task.file));
  const JsonReader r(j, task.file);
  KSEEK_RETURN_IF_ERROR(r.ExpectKeys({"name", "description", "params", "tensors", "flops", "bytes",
                                      "sources", "policy", "targets", "limits", "goal", "scenarios"}));
  KSEEK_ASSIGN_OR_RETURN(task.name, r.String("name"));
  if (r.Has("description")) {
    KSEEK_ASSIGN_OR_RETURN(task.description, r.String("description"));
  }

  KSEEK_ASSIGN_OR_RETURN(const JsonReader params, r.Field("params"));
  KSEEK_RETURN_IF_ERROR(ParseParams(params, &task));
  KSEEK_ASSIGN_OR_RETURN(const JsonReader tensors, r.Field("tensors"));
  KSEEK_RETURN_IF_ERROR(ParseTensors(tensors, &task));
  for (const char* key : {"flops", "bytes"}) {
    if (!r.Has(key)) continue;
    KSEEK_ASSIGN_OR_RETURN((std::string(key) == "flops" ? task.flops : task.bytes),
                           ParseExpr(*r.Field(key), task, /*allow_integer=*/false,
                                     "expected an expression string"));
  }

  KSEEK_ASSIGN_OR_RETURN(const JsonReader targets, r.Field("targets"));
  std::vector<std::string> names;
  KSEEK_RETURN_IF_ERROR(ParseStringList(targets, &names));
  if (names.empty()) return targets.Error("a task needs at least one target");
  for (size_t i = 0; i < names.size(); ++i) {
    auto t = ParseTarget(names[i]);
    if (!t.ok()) return targets.Element(i).Error(t.status().message());
    task.targets.push_back(*t);
  }

  KSEEK_ASSIGN_OR_RETURN(const JsonReader sources, r.Field("sources"));
  KSEEK_RETURN_IF_ERROR(ParseSources(sources, &task));
  for (Target t : task.targets)
    if (!task.sources.count(TargetFamily(t)))
      return sources.Error(absl::StrCat("target ", TargetName(t), " needs sources for family \"",
                                        TargetFamily(t), "\""));
  KSEEK_RETURN_IF_ERROR(ParsePolicyLimitsGoal(r, &task));

  KSEEK_ASSIGN_OR_RETURN(const JsonReader scenarios, r.Field("scenarios"));
  KSEEK_ASSIGN_OR_RETURN(task.scenarios, ParseScenarios(task, j, task.file));
  if (task.scenarios.empty()) return scenarios.Error("a task needs at least one scenario");
  return task;
}

ExprEnv ScenarioEnv(const Scenario& s) { return ExprEnv(s.params.begin(), s.params.end()); }

kseek_dtype TensorDtype(const TensorSpec& t, const Scenario& s) {
  if (t.fixed_dtype) return *t.fixed_dtype;
  auto it = s.params.find(t.dtype_param);
  return it == s.params.end() ? KSEEK_F32 : static_cast<kseek_dtype>(it->second);
}

absl::StatusOr<std::vector<int64_t>> TensorShape(const TensorSpec& t, const Scenario& s) {
  ExprEnv env = ScenarioEnv(s);
  std::vector<int64_t> shape;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    auto v = t.shape[d].Eval(env);
    if (!v.ok()) return v.status();
    if (*v <= 0)
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", d, " (", t.shape[d].text(), ") is ", *v, ", must be positive"));
    shape.push_back(*v);
  }
  return shape;
}

json ScenarioParamsJson(const TaskSpec& task, const Scenario& s) {
  json out = json::object();
  for (const auto& [name, value] : s.params) {
    const ParamSpec* p = task.FindParam(name);
    if (p != nullptr && p->is_dtype)
      out[name] = DtypeName(static_cast<kseek_dtype>(value));
    else
      out[name] = value;
  }
  return out;
}

}  // namespace kseek
