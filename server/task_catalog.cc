// The coordinator's task catalog (see task_catalog.h).
#include "server/task_catalog.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/src/evaluate.h"
#include "proto/request.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;
namespace fs = std::filesystem;

absl::StatusOr<TaskCatalog> TaskCatalog::Load(const std::string& dir) {
  TaskCatalog catalog;
  catalog.dir_ = dir;
  std::error_code ec;
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory() && fs::is_regular_file(entry.path() / "task.json")) folders.push_back(entry.path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat(dir, ": cannot list the task folders: ", ec.message()));
  std::sort(folders.begin(), folders.end());
  for (const fs::path& folder : folders) {
    absl::StatusOr<TaskSpec> spec = LoadTask(folder.string());
    if (!spec.ok()) return spec.status();
    if (catalog.tasks_.count(spec->name) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(spec->file, ": task '", spec->name, "' is also ",
                                                     catalog.tasks_.at(spec->name).spec.file));
    }
    Entry entry;
    for (Target target : spec->targets) {
      absl::StatusOr<v1::TaskFiles> files = PackTask(folder.string(), target);
      if (!files.ok()) return files.status();
      entry.files[target] = *std::move(files);
    }
    entry.spec = *std::move(spec);
    catalog.tasks_.emplace(entry.spec.name, std::move(entry));
  }
  return catalog;
}

std::vector<v1::TaskSummary> TaskCatalog::List() const {
  std::vector<v1::TaskSummary> out;
  for (const auto& [name, entry] : tasks_) {
    v1::TaskSummary t;
    t.set_name(name);
    t.set_description(entry.spec.description);
    t.set_goal_speedup(entry.spec.goal_speedup);
    for (Target target : entry.spec.targets) {
      t.add_targets(TargetName(target));
      v1::TaskScenarios* s = t.add_scenarios();
      s->set_target(TargetName(target));
      s->set_scenarios(static_cast<int>(ScenariosFor(entry.spec, target).size()));
    }
    out.push_back(std::move(t));
  }
  return out;
}

absl::Status TaskCatalog::Resolve(v1::EvaluationRequest* request) const {
  if (request->task_name().empty()) return absl::OkStatus();
  if (!request->task().files().empty()) {
    return absl::InvalidArgumentError("task_name: give task files or task_name, not both");
  }
  auto it = tasks_.find(request->task_name());
  if (it == tasks_.end()) {
    std::vector<std::string> names;
    for (const auto& [name, entry] : tasks_) names.push_back(name);
    return absl::InvalidArgumentError(absl::StrCat(
        "task_name: the coordinator has no task '", request->task_name().substr(0, 80), "' (it has: ",
        names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
  }
  absl::StatusOr<Target> target = ParseTarget(request->target());
  if (!target.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: ", request->target().empty() ? "missing" : target.status().message()));
  }
  auto files = it->second.files.find(*target);
  if (files == it->second.files.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("task_name: task '", it->first, "' does not support target ", request->target()));
  }
  *request->mutable_task() = files->second;
  request->clear_task_name();
  return absl::OkStatus();
}

}  // namespace kseek::server
