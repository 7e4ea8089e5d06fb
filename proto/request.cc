// Packing, validating and unpacking evaluation requests (request.h).
#include "proto/request.h"

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/file.h"
#include "nlohmann/json.hpp"

namespace kseek {

namespace v1 = ::kernelseek::v1;
namespace fs = std::filesystem;

namespace {

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

bool IsHeader(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".h" || ext == ".cuh" || ext == ".hpp" || ext == ".inc";
}

// A relative path that stays inside its folder.
bool SafeRelativePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (const auto& part : fs::path(path)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<v1::TaskFiles> PackTask(const std::string& task_dir, Target target) {
  // LoadTask validates the folder and resolves the sources it names.
  auto task = LoadTask(task_dir);
  if (!task.ok()) return task.status();
  if (!task->Supports(target))
    return absl::InvalidArgumentError(
        absl::StrCat(task->file, ": task '", task->name, "' does not support target ", TargetName(target)));
  // Every file task.json names travels, so the worker's LoadTask sees the
  // same folder; they are small text files.
  std::vector<std::string> paths = {task->file};
  for (const auto& [family, sources] : task->sources) {
    paths.push_back(sources.reference);
    if (!sources.baseline.empty()) paths.push_back(sources.baseline);
    paths.insert(paths.end(), sources.kernels.begin(), sources.kernels.end());
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(task->dir, ec))
    if (entry.is_regular_file() && IsHeader(entry.path())) paths.push_back(entry.path().string());
  v1::TaskFiles files;
  size_t total = 0;
  for (const auto& path : paths) {
    std::string rel = fs::relative(path, task->dir).string();
    auto text = ReadFile(path);
    if (!text.ok()) return text.status();
    total += text->size();
    (*files.mutable_files())[rel] = *text;
  }
  if (total > kMaxTaskBytes)
    return absl::InvalidArgumentError(
        absl::StrCat(task->dir, ": the task's files take ", total, " bytes, more than the limit of ", kMaxTaskBytes));
  return files;
}

absl::Status UnpackTask(const v1::TaskFiles& files, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir, ": cannot create: ", ec.message()));
  for (const auto& [path, contents] : files.files()) {
    if (!SafeRelativePath(path))
      return Invalid(absl::StrCat("task.files[", path, "]"), "must be a relative path without '.' or '..'");
    fs::path target = fs::path(dir) / path;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    out << contents;
    if (!out) return absl::InternalError(absl::StrCat(target.string(), ": cannot write"));
  }
  return absl::OkStatus();
}

UnpackedRequest::~UnpackedRequest() {
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

absl::StatusOr<std::unique_ptr<UnpackedRequest>> UnpackedRequest::Create(const v1::EvaluationRequest& request) {
  auto target = ParseTarget(request.target());
  if (!target.ok()) return Invalid("target", request.target().empty() ? "missing" : std::string(target.status().message()));
  if (request.kernel_source().empty()) return Invalid("kernel_source", "missing");
  if (request.kernel_source().size() > kMaxKernelSourceBytes)
    return Invalid("kernel_source", absl::StrCat(request.kernel_source().size(), " bytes, more than the limit of ",
                                                 kMaxKernelSourceBytes));
  if (absl::StrContains(request.kernel_name(), "/"))
    return Invalid("kernel_name", "a file name, not a path");
  if (request.kernel_name().size() > kMaxNameBytes)
    return Invalid("kernel_name", absl::StrCat(request.kernel_name().size(), " bytes, more than the limit of ",
                                               kMaxNameBytes));
  if (!request.task_name().empty())
    return Invalid("task_name", "only a coordinator resolves task names; send the task's files");
  if (request.task().files().empty()) return Invalid("task", "missing (give task files, or task_name)");
  if (!request.task().files().contains("task.json")) return Invalid("task.files", "no task.json");
  if (request.task().files_size() > kMaxTaskFiles)
    return Invalid("task.files", absl::StrCat(request.task().files_size(), " files, more than the limit of ",
                                              kMaxTaskFiles));
  size_t total = 0;
  for (const auto& [path, contents] : request.task().files()) {
    if (path.size() > kMaxNameBytes)
      return Invalid("task.files", absl::StrCat("a path of ", path.size(), " bytes, more than the limit of ",
                                                kMaxNameBytes));
    total += contents.size();
  }
  if (total > kMaxTaskBytes)
    return Invalid("task.files", absl::StrCat(total, " bytes, more than the limit of ", kMaxTaskBytes));
  if (request.scenarios_json().size() > kMaxScenariosJsonBytes)
    return Invalid("scenarios_json", absl::StrCat(request.scenarios_json().size(),
                                                  " bytes, more than the limit of ", kMaxScenariosJsonBytes));
  if (!request.scenario_names().empty() && !request.scenarios_json().empty())
    return Invalid("scenario_names", "give scenario names or scenarios_json, not both");
  if (request.scenario_names_size() > kMaxScenarios)
    return Invalid("scenario_names", absl::StrCat(request.scenario_names_size(), " names, more than the limit of ",
                                                  kMaxScenarios));
  if (request.timing().max_samples() < 0 || request.timing().max_samples() > kMaxTimingSamples)
    return Invalid("timing.max_samples", absl::StrCat(request.timing().max_samples(), " is outside 0 (the default) to ",
                                                      kMaxTimingSamples));
  const double max_seconds = request.timing().max_seconds();
  if (!std::isfinite(max_seconds) || max_seconds < 0 || max_seconds > kMaxTimingSeconds)
    return Invalid("timing.max_seconds", absl::StrCat(max_seconds, " is outside 0 (the default) to ",
                                                      kMaxTimingSeconds, " seconds"));
  if (request.has_scenario_timeout_s()) {
    const double t = request.scenario_timeout_s();
    if (!std::isfinite(t) || t < kMinScenarioTimeoutS || t > kMaxScenarioTimeoutS)
      return Invalid("scenario_timeout_s", absl::StrCat(t, " is outside ", kMinScenarioTimeoutS, " to ",
                                                        kMaxScenarioTimeoutS, " seconds"));
  }

  std::unique_ptr<UnpackedRequest> out(new UnpackedRequest());
  std::string templ = (fs::temp_directory_path() / "kseek-request-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return absl::InternalError("cannot create a folder for the task");
  out->dir_ = templ;
  if (auto s = UnpackTask(request.task(), out->dir_ + "/task"); !s.ok()) return s;
  auto task = LoadTask(out->dir_ + "/task");
  if (!task.ok()) {
    // Name the field, not the private folder.
    std::string msg = absl::StrReplaceAll(task.status().message(), {{out->dir_ + "/task/", ""}});
    return Invalid("task.files[task.json]", msg);
  }
  out->task_ = std::move(*task);
  if (!out->task_.Supports(*target))
    return Invalid("target", absl::StrCat("task '", out->task_.name, "' does not support ", request.target()));

  EvalRequest& eval = out->eval_;
  eval.target = *target;
  eval.kernel_source = request.kernel_source();
  eval.kernel_name = request.kernel_name().empty() ? (*target == Target::kHost ? "kernel.cc" : "kernel.cu")
                                                   : request.kernel_name();
  if (!request.scenarios_json().empty()) {
    nlohmann::json j = nlohmann::json::parse(request.scenarios_json(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Invalid("scenarios_json", "not valid JSON");
    auto scenarios = ParseScenarios(out->task_, j, "scenarios_json");
    if (!scenarios.ok()) return absl::InvalidArgumentError(scenarios.status().message());
    if (scenarios->empty()) return Invalid("scenarios_json", "no scenarios");
    if (scenarios->size() > static_cast<size_t>(kMaxScenarios))
      return Invalid("scenarios_json", absl::StrCat(scenarios->size(), " scenarios, more than the limit of ",
                                                    kMaxScenarios));
    for (const auto& s : *scenarios)
      if (!s.RunsOn(*target))
        return Invalid("scenarios_json", absl::StrCat("scenario '", s.name, "' does not run on ", request.target()));
    eval.scenarios = std::move(*scenarios);
  }
  std::map<std::string, int> named;
  for (int i = 0; i < request.scenario_names_size(); ++i) {
    const std::string& name = request.scenario_names(i);
    if (auto [it, fresh] = named.emplace(name, i); !fresh)
      return Invalid(absl::StrCat("scenario_names[", i, "]"),
                     absl::StrCat("'", name, "' is scenario_names[", it->second, "] already; name each scenario once"));
    const Scenario* found = nullptr;
    for (const auto& s : out->task_.scenarios)
      if (s.name == name) found = &s;
    std::string field = absl::StrCat("scenario_names[", i, "]");
    if (found == nullptr) return Invalid(field, absl::StrCat("task '", out->task_.name, "' has no scenario '", name, "'"));
    if (!found->RunsOn(*target)) return Invalid(field, absl::StrCat("'", name, "' does not run on ", request.target()));
    eval.scenarios.push_back(*found);
  }
  if (eval.scenarios.empty() && ScenariosFor(out->task_, *target).empty())
    return Invalid("target", absl::StrCat("task '", out->task_.name, "' has no scenario for ", request.target()));
  if (request.has_seed()) eval.seed = request.seed();
  eval.timing.enabled = !request.timing().disabled();
  if (request.timing().max_samples() > 0) {
    eval.timing.max_samples = request.timing().max_samples();
    eval.timing.min_samples = std::min(eval.timing.min_samples, eval.timing.max_samples);
  }
  if (request.timing().max_seconds() > 0) eval.timing.max_seconds = request.timing().max_seconds();
  if (request.has_scenario_timeout_s()) eval.scenario_timeout_s = request.scenario_timeout_s();
  return out;
}

}  // namespace kseek
