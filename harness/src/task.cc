// Loading and validating task.json (format: harness/README.md).
#include "task.h"

#include <cctype>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

// Collects errors as "FILE: FIELD: what".
class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}
  absl::Status Fail(const std::string& field, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", field, ": ", what));
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

absl::Status RequireType(const Checker& c, const json& j, const std::string& field,
                         json::value_t type, const char* type_name) {
  bool ok = j.type() == type ||
            (type == json::value_t::number_integer && j.is_number_unsigned()) ||
            (type == json::value_t::number_float && j.is_number());
  if (!ok) return c.Fail(field, absl::StrCat("expected ", type_name, ", got ", j.type_name()));
  return absl::OkStatus();
}

#define KSEEK_RETURN_IF_ERROR(expr)       \
  do {                                    \
    absl::Status status_ = (expr);        \
    if (!status_.ok()) return status_;    \
  } while (0)

absl::StatusOr<std::string> GetString(const Checker& c, const json& obj, const std::string& field,
                                      const std::string& key, bool required) {
  if (!obj.contains(key)) {
    if (required) return c.Fail(absl::StrCat(field, key), "missing");
    return std::string();
  }
  KSEEK_RETURN_IF_ERROR(RequireType(c, obj[key], field + key, json::value_t::string, "a string"));
  return obj[key].get<std::string>();
}

absl::StatusOr<double> GetNumber(const Checker& c, const json& obj, const std::string& path) {
  if (!obj.is_number()) return c.Fail(path, absl::StrCat("expected a number, got ", obj.type_name()));
  return obj.get<double>();
}

absl::Status CheckKeys(const Checker& c, const json& obj, const std::string& field,
                       const std::set<std::string>& allowed) {
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.count(key))
      return c.Fail(field.empty() ? key : absl::StrCat(field, ".", key),
                    absl::StrCat("unknown field (expected one of: ",
                                 absl::StrJoin(allowed, ", "), ")"));
  }
  return absl::OkStatus();
}

absl::Status ParseParams(const Checker& c, const json& j, TaskSpec* task) {
  KSEEK_RETURN_IF_ERROR(RequireType(c, j, "params", json::value_t::object, "an object"));
  if (j.empty()) return c.Fail("params", "a task needs at least one parameter");
  for (const auto& [name, spec] : j.items()) {
    std::string field = absl::StrCat("params.", name);
    if (ParseDtype(name).ok()) return c.Fail(field, "a parameter may not be named like a dtype");
    bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char ch : name) identifier &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    if (!identifier) return c.Fail(field, "a parameter name must be an identifier");
    KSEEK_RETURN_IF_ERROR(RequireType(c, spec, field, json::value_t::object, "an object"));
    KSEEK_RETURN_IF_ERROR(CheckKeys(c, spec, field, {"dtype", "min", "max", "multiple_of", "description"}));
    ParamSpec p;
    p.name = name;
    if (spec.contains("dtype")) {
      p.is_dtype = true;
      const json& list = spec["dtype"];
      if (!list.is_array() || list.empty())
        return c.Fail(field + ".dtype", "expected a non-empty array of dtype names");
      for (size_t i = 0; i < list.size(); ++i) {
        std::string f = absl::StrCat(field, ".dtype[", i, "]");
        KSEEK_RETURN_IF_ERROR(RequireType(c, list[i], f, json::value_t::string, "a string"));
        auto d = ParseDtype(list[i].get<std::string>());
        if (!d.ok()) return c.Fail(f, std::string(d.status().message()));
        p.allowed_dtypes.push_back(*d);
      }
    }
    for (const char* bound : {"min", "max"}) {
      if (!spec.contains(bound)) continue;
      std::string f = absl::StrCat(field, ".", bound);
      if (p.is_dtype) return c.Fail(f, "a dtype parameter has no bounds");
      if (!spec[bound].is_number_integer()) return c.Fail(f, "expected an integer");
      (std::string(bound) == "min" ? p.min : p.max) = spec[bound].get<int64_t>();
    }
    if (spec.contains("multiple_of")) {
      std::string f = field + ".multiple_of";
      if (p.is_dtype) return c.Fail(f, "a dtype parameter has no multiple_of");
      if (!spec["multiple_of"].is_number_integer() || spec["multiple_of"].get<int64_t>() < 1)
        return c.Fail(f, "expected a positive integer");
      p.multiple_of = spec["multiple_of"].get<int64_t>();
    }
    task->params.push_back(std::move(p));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tolerance> ParseTolerance(const Checker& c, const json& j, const std::string& field) {
  KSEEK_RETURN_IF_ERROR(RequireType(c, j, field, json::value_t::object, "an object"));
  KSEEK_RETURN_IF_ERROR(CheckKeys(c, j, field, {"rel_l2", "max_abs"}));
  Tolerance t;
  for (const char* key : {"rel_l2", "max_abs"}) {
    std::string f = absl::StrCat(field, ".", key);
    if (!j.contains(key)) return c.Fail(f, "missing");
    auto v = GetNumber(c, j[key], f);
    if (!v.ok()) return v.status();
    if (*v < 0) return c.Fail(f, "must not be negative");
    (std::string(key) == "rel_l2" ? t.rel_l2 : t.max_abs) = *v;
  }
  return t;
}

absl::Status ParseTensors(const Checker& c, const json& j, TaskSpec* task) {
  KSEEK_RETURN_IF_ERROR(RequireType(c, j, "tensors", json::value_t::array, "an array"));
  if (j.empty()) return c.Fail("tensors", "a task needs at least one tensor");
  std::set<std::string> seen;
  bool any_out = false;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string field = absl::StrCat("tensors[", i, "]");
    const json& t = j[i];
    KSEEK_RETURN_IF_ERROR(RequireType(c, t, field, json::value_t::object, "an object"));
    KSEEK_RETURN_IF_ERROR(
        CheckKeys(c, t, field, {"name", "role", "dtype", "shape", "init", "tolerance", "description"}));
    TensorSpec spec;
    auto name = GetString(c, t, field + ".", "name", true);
    if (!name.ok()) return name.status();
    spec.name = *name;
    if (!seen.insert(spec.name).second) return c.Fail(field + ".name", "duplicate tensor name '" + spec.name + "'");
    auto role = GetString(c, t, field + ".", "role", true);
    if (!role.ok()) return role.status();
    if (*role == "in") spec.role = TensorRole::kIn;
    else if (*role == "out") spec.role = TensorRole::kOut;
    else if (*role == "scratch") spec.role = TensorRole::kScratch;
    else return c.Fail(field + ".role", "expected \"in\", \"out\" or \"scratch\", got \"" + *role + "\"");
    any_out |= spec.role == TensorRole::kOut;

    auto dtype = GetString(c, t, field + ".", "dtype", true);
    if (!dtype.ok()) return dtype.status();
    if (auto fixed = ParseDtype(*dtype); fixed.ok()) {
      spec.fixed_dtype = *fixed;
    } else {
      const ParamSpec* p = task->FindParam(*dtype);
      if (p == nullptr || !p->is_dtype)
        return c.Fail(field + ".dtype", "'" + *dtype + "' is neither a dtype nor a dtype parameter");
      spec.dtype_param = *dtype;
    }

    if (!t.contains("shape")) return c.Fail(field + ".shape", "missing");
    const json& shape = t["shape"];
    if (!shape.is_array() || shape.empty() || shape.size() > KSEEK_MAX_DIMS)
      return c.Fail(field + ".shape", absl::StrCat("expected an array of 1 to ", KSEEK_MAX_DIMS, " expressions"));
    for (size_t d = 0; d < shape.size(); ++d) {
      std::string f = absl::StrCat(field, ".shape[", d, "]");
      std::string text = shape[d].is_number_integer() ? std::to_string(shape[d].get<int64_t>())
                         : shape[d].is_string()       ? shape[d].get<std::string>()
                                                      : std::string();
      if (text.empty()) return c.Fail(f, "expected an expression string or an integer");
      auto e = Expr::Parse(text);
      if (!e.ok()) return c.Fail(f, std::string(e.status().message()));
      for (const auto& n : e->names())
        if (!task->FindParam(n)) return c.Fail(f, "unknown parameter '" + n + "'");
      spec.shape.push_back(*e);
    }

    if (t.contains("init")) {
      if (spec.role != TensorRole::kIn) return c.Fail(field + ".init", "only inputs have an init");
      const json& init = t["init"];
      std::string f = field + ".init";
      KSEEK_RETURN_IF_ERROR(RequireType(c, init, f, json::value_t::object, "an object"));
      auto dist = GetString(c, init, f + ".", "dist", true);
      if (!dist.ok()) return dist.status();
      std::pair<const char*, const char*> keys;
      if (*dist == "normal") {
        spec.init.kind = Distribution::kNormal;
        keys = {"mean", "std"};
      } else if (*dist == "uniform") {
        spec.init.kind = Distribution::kUniform;
        keys = {"low", "high"};
      } else {
        return c.Fail(f + ".dist", "expected \"normal\" or \"uniform\", got \"" + *dist + "\"");
      }
      KSEEK_RETURN_IF_ERROR(CheckKeys(c, init, f, {"dist", keys.first, keys.second}));
      for (int k = 0; k < 2; ++k) {
        const char* key = k == 0 ? keys.first : keys.second;
        if (!init.contains(key)) return c.Fail(absl::StrCat(f, ".", key), "missing");
        auto v = GetNumber(c, init[key], absl::StrCat(f, ".", key));
        if (!v.ok()) return v.status();
        (k == 0 ? spec.init.a : spec.init.b) = *v;
      }
      if (spec.init.kind == Distribution::kNormal && spec.init.b <= 0)
        return c.Fail(f + ".std", "must be positive");
      if (spec.init.kind == Distribution::kUniform && spec.init.b <= spec.init.a)
        return c.Fail(f + ".high", "must be greater than low");
    }

    if (spec.role == TensorRole::kOut) {
      if (!t.contains("tolerance")) return c.Fail(field + ".tolerance", "missing (every output needs one)");
      const json& tol = t["tolerance"];
      std::string f = field + ".tolerance";
      KSEEK_RETURN_IF_ERROR(RequireType(c, tol, f, json::value_t::object, "an object"));
      if (tol.contains("rel_l2") || tol.contains("max_abs")) {
        auto one = ParseTolerance(c, tol, f);
        if (!one.ok()) return one.status();
        spec.tolerance["*"] = *one;
      } else {
        for (const auto& [key, value] : tol.items()) {
          if (key != "*" && !ParseDtype(key).ok())
            return c.Fail(f + "." + key, "expected a dtype name or \"*\"");
          auto one = ParseTolerance(c, value, f + "." + key);
          if (!one.ok()) return one.status();
          spec.tolerance[key] = *one;
        }
        if (spec.tolerance.empty()) return c.Fail(f, "empty");
      }
    } else if (t.contains("tolerance")) {
      return c.Fail(field + ".tolerance", "only outputs have a tolerance");
    }
    task->tensors.push_back(std::move(spec));
  }
  if (!any_out) return c.Fail("tensors", "a task needs at least one output (role \"out\")");
  return absl::OkStatus();
}

absl::Status ParseStringList(const Checker& c, const json& j, const std::string& field,
                             std::vector<std::string>* out);

absl::Status ParseSources(const Checker& c, const json& j, TaskSpec* task) {
  KSEEK_RETURN_IF_ERROR(RequireType(c, j, "sources", json::value_t::object, "an object"));
  for (const auto& [family, value] : j.items()) {
    std::string field = "sources." + family;
    if (family != "cuda" && family != "host") return c.Fail(field, "expected \"cuda\" or \"host\"");
    KSEEK_RETURN_IF_ERROR(RequireType(c, value, field, json::value_t::object, "an object"));
    KSEEK_RETURN_IF_ERROR(CheckKeys(c, value, field, {"reference", "baseline", "kernels"}));
    FamilySources s;
    auto resolve = [&](const std::string& f, const json& v) -> absl::StatusOr<std::string> {
      if (!v.is_string() || v.get<std::string>().empty()) return c.Fail(f, "expected a file name");
      std::string path = task->dir + "/" + v.get<std::string>();
      if (!std::ifstream(path).good()) return c.Fail(f, "file not found: " + path);
      return path;
    };
    if (!value.contains("reference")) return c.Fail(field + ".reference", "missing");
    auto ref = resolve(field + ".reference", value["reference"]);
    if (!ref.ok()) return ref.status();
    s.reference = *ref;
    if (value.contains("baseline")) {
      auto base = resolve(field + ".baseline", value["baseline"]);
      if (!base.ok()) return base.status();
      s.baseline = *base;
    }
    if (value.contains("kernels")) {
      const json& ks = value["kernels"];
      if (!ks.is_array()) return c.Fail(field + ".kernels", "expected an array of file names");
      for (size_t i = 0; i < ks.size(); ++i) {
        // A file name, or {"file": NAME, "targets": [...]} for a kernel
        // that runs on some targets of the family only.
        const std::string f = absl::StrCat(field, ".kernels[", i, "]");
        const bool restricted = ks[i].is_object();
        if (restricted) KSEEK_RETURN_IF_ERROR(CheckKeys(c, ks[i], f, {"file", "targets"}));
        auto k = resolve(restricted ? f + ".file" : f, restricted ? ks[i].value("file", json()) : ks[i]);
        if (!k.ok()) return k.status();
        s.kernels.push_back(*k);
        if (!restricted) continue;
        if (!ks[i].contains("targets")) return c.Fail(f + ".targets", "missing");
        std::vector<std::string> names;
        KSEEK_RETURN_IF_ERROR(ParseStringList(c, ks[i]["targets"], f + ".targets", &names));
        for (size_t n = 0; n < names.size(); ++n) {
          auto t = ParseTarget(names[n]);
          const std::string tf = absl::StrCat(f, ".targets[", n, "]");
          if (!t.ok()) return c.Fail(tf, std::string(t.status().message()));
          if (TargetFamily(*t) != family) return c.Fail(tf, "target " + names[n] + " is not of family \"" + family + "\"");
          s.kernel_targets[*k].push_back(*t);
        }
      }
    }
    task->sources[family] = std::move(s);
  }
  return absl::OkStatus();
}

absl::Status ParseStringList(const Checker& c, const json& j, const std::string& field,
                             std::vector<std::string>* out) {
  if (!j.is_array()) return c.Fail(field, "expected an array of strings");
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string() || j[i].get<std::string>().empty())
      return c.Fail(absl::StrCat(field, "[", i, "]"), "expected a non-empty string");
    out->push_back(j[i].get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<Scenario> ParseScenario(const Checker& c, const TaskSpec& task, const json& j,
                                       const std::string& field) {
  KSEEK_RETURN_IF_ERROR(RequireType(c, j, field, json::value_t::object, "an object"));
  KSEEK_RETURN_IF_ERROR(CheckKeys(c, j, field, {"name", "params", "targets", "description"}));
  Scenario s;
  auto name = GetString(c, j, field + ".", "name", true);
  if (!name.ok()) return name.status();
  if (name->empty()) return c.Fail(field + ".name", "must not be empty");
  s.name = *name;
  if (!j.contains("params")) return c.Fail(field + ".params", "missing");
  const json& params = j["params"];
  KSEEK_RETURN_IF_ERROR(RequireType(c, params, field + ".params", json::value_t::object, "an object"));
  for (const auto& [key, value] : params.items()) {
    std::string f = absl::StrCat(field, ".params.", key);
    const ParamSpec* p = task.FindParam(key);
    if (p == nullptr) return c.Fail(f, "not a parameter of task '" + task.name + "'");
    if (p->is_dtype) {
      if (!value.is_string()) return c.Fail(f, "expected a dtype name");
      auto d = ParseDtype(value.get<std::string>());
      if (!d.ok()) return c.Fail(f, std::string(d.status().message()));
      bool allowed = false;
      for (auto a : p->allowed_dtypes) allowed |= a == *d;
      if (!allowed) return c.Fail(f, "dtype '" + value.get<std::string>() + "' is not allowed for this parameter");
      s.params[key] = *d;
    } else {
      if (!value.is_number_integer()) return c.Fail(f, "expected an integer");
      int64_t v = value.get<int64_t>();
      if (p->min && v < *p->min) return c.Fail(f, absl::StrCat(v, " is below the minimum ", *p->min));
      if (p->max && v > *p->max) return c.Fail(f, absl::StrCat(v, " is above the maximum ", *p->max));
      if (p->multiple_of && v % *p->multiple_of != 0)
        return c.Fail(f, absl::StrCat(v, " is not a multiple of ", *p->multiple_of));
      s.params[key] = v;
    }
  }
  for (const auto& p : task.params)
    if (!s.params.count(p.name)) return c.Fail(field + ".params." + p.name, "missing");
  if (j.contains("targets")) {
    std::vector<std::string> names;
    KSEEK_RETURN_IF_ERROR(ParseStringList(c, j["targets"], field + ".targets", &names));
    for (size_t i = 0; i < names.size(); ++i) {
      auto t = ParseTarget(names[i]);
      std::string f = absl::StrCat(field, ".targets[", i, "]");
      if (!t.ok()) return c.Fail(f, std::string(t.status().message()));
      if (!task.Supports(*t)) return c.Fail(f, "the task does not support target " + names[i]);
      s.targets.push_back(*t);
    }
  }
  // Every tensor must have a valid, positive shape in this scenario.
  for (const auto& t : task.tensors) {
    auto shape = TensorShape(t, s);
    if (!shape.ok()) return c.Fail(field, absl::StrCat("tensor ", t.name, ": ", shape.status().message()));
  }
  return s;
}

absl::StatusOr<json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return json::parse(buf.str());
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<std::vector<Scenario>> ParseScenarios(const TaskSpec& task, const json& j,
                                                     const std::string& origin) {
  Checker c(origin);
  const json* list = &j;
  std::string prefix = "scenarios";
  if (j.is_object()) {
    if (!j.contains("scenarios")) return c.Fail("scenarios", "missing");
    list = &j["scenarios"];
  } else {
    prefix = "";
  }
  if (!list->is_array()) return c.Fail(prefix.empty() ? "(top level)" : prefix, "expected an array of scenarios");
  std::vector<Scenario> out;
  std::set<std::string> names;
  for (size_t i = 0; i < list->size(); ++i) {
    std::string field = absl::StrCat(prefix, "[", i, "]");
    auto s = ParseScenario(c, task, (*list)[i], field);
    if (!s.ok()) return s.status();
    if (!names.insert(s->name).second) return c.Fail(field + ".name", "duplicate scenario name '" + s->name + "'");
    out.push_back(std::move(*s));
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
  auto parsed = ReadJson(task.file);
  if (!parsed.ok()) return parsed.status();
  const json& j = *parsed;
  Checker c(task.file);
  if (!j.is_object()) return c.Fail("(top level)", "expected an object");
  KSEEK_RETURN_IF_ERROR(CheckKeys(c, j, "", {"name", "description", "params", "tensors", "flops", "bytes",
                                             "sources", "policy", "targets", "limits", "goal", "scenarios"}));
  auto name = GetString(c, j, "", "name", true);
  if (!name.ok()) return name.status();
  task.name = *name;
  auto desc = GetString(c, j, "", "description", false);
  if (!desc.ok()) return desc.status();
  task.description = *desc;

  if (!j.contains("params")) return c.Fail("params", "missing");
  KSEEK_RETURN_IF_ERROR(ParseParams(c, j["params"], &task));
  if (!j.contains("tensors")) return c.Fail("tensors", "missing");
  KSEEK_RETURN_IF_ERROR(ParseTensors(c, j["tensors"], &task));

  for (const char* key : {"flops", "bytes"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_string()) return c.Fail(key, "expected an expression string");
    auto e = Expr::Parse(j[key].get<std::string>());
    if (!e.ok()) return c.Fail(key, std::string(e.status().message()));
    for (const auto& n : e->names())
      if (!task.FindParam(n)) return c.Fail(key, "unknown parameter '" + n + "'");
    (std::string(key) == "flops" ? task.flops : task.bytes) = *e;
  }

  if (!j.contains("targets")) return c.Fail("targets", "missing");
  std::vector<std::string> targets;
  KSEEK_RETURN_IF_ERROR(ParseStringList(c, j["targets"], "targets", &targets));
  if (targets.empty()) return c.Fail("targets", "a task needs at least one target");
  for (size_t i = 0; i < targets.size(); ++i) {
    auto t = ParseTarget(targets[i]);
    if (!t.ok()) return c.Fail(absl::StrCat("targets[", i, "]"), std::string(t.status().message()));
    task.targets.push_back(*t);
  }

  if (!j.contains("sources")) return c.Fail("sources", "missing");
  KSEEK_RETURN_IF_ERROR(ParseSources(c, j["sources"], &task));
  for (Target t : task.targets)
    if (!task.sources.count(TargetFamily(t)))
      return c.Fail("sources", absl::StrCat("target ", TargetName(t), " needs sources for family \"",
                                            TargetFamily(t), "\""));

  if (j.contains("policy")) {
    const json& p = j["policy"];
    KSEEK_RETURN_IF_ERROR(RequireType(c, p, "policy", json::value_t::object, "an object"));
    KSEEK_RETURN_IF_ERROR(CheckKeys(c, p, "policy", {"forbidden_includes", "forbidden_symbols"}));
    if (p.contains("forbidden_includes"))
      KSEEK_RETURN_IF_ERROR(ParseStringList(c, p["forbidden_includes"], "policy.forbidden_includes",
                                            &task.policy.forbidden_includes));
    if (p.contains("forbidden_symbols"))
      KSEEK_RETURN_IF_ERROR(ParseStringList(c, p["forbidden_symbols"], "policy.forbidden_symbols",
                                            &task.policy.forbidden_symbols));
  }

  if (j.contains("limits")) {
    const json& l = j["limits"];
    KSEEK_RETURN_IF_ERROR(RequireType(c, l, "limits", json::value_t::object, "an object"));
    KSEEK_RETURN_IF_ERROR(CheckKeys(c, l, "limits", {"scenario_timeout_s", "job_timeout_s"}));
    for (const char* key : {"scenario_timeout_s", "job_timeout_s"}) {
      if (!l.contains(key)) continue;
      auto v = GetNumber(c, l[key], absl::StrCat("limits.", key));
      if (!v.ok()) return v.status();
      if (*v <= 0) return c.Fail(absl::StrCat("limits.", key), "must be positive");
      (std::string(key) == "job_timeout_s" ? task.job_timeout_s : task.scenario_timeout_s) = *v;
    }
  }

  if (j.contains("goal")) {
    const json& g = j["goal"];
    KSEEK_RETURN_IF_ERROR(RequireType(c, g, "goal", json::value_t::object, "an object"));
    KSEEK_RETURN_IF_ERROR(CheckKeys(c, g, "goal", {"speedup"}));
    if (g.contains("speedup")) {
      auto v = GetNumber(c, g["speedup"], "goal.speedup");
      if (!v.ok()) return v.status();
      if (*v <= 0) return c.Fail("goal.speedup", "must be positive");
      task.goal_speedup = *v;
    }
  }

  if (!j.contains("scenarios")) return c.Fail("scenarios", "missing");
  auto scenarios = ParseScenarios(task, j, task.file);
  if (!scenarios.ok()) return scenarios.status();
  if (scenarios->empty()) return c.Fail("scenarios", "a task needs at least one scenario");
  task.scenarios = std::move(*scenarios);
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
