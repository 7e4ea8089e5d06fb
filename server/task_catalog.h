// The tasks a coordinator serves by name: every folder with a task.json
// under one directory, loaded once at start, so that a client can submit
// `task_name: "softmax"` instead of packing the task's files itself.
//
// Immutable after Load; thread-safe.
#ifndef KERNELSEEK_SERVER_TASK_CATALOG_H_
#define KERNELSEEK_SERVER_TASK_CATALOG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/src/task.h"
#include "kernelseek/v1/coordinator.pb.h"
#include "kernelseek/v1/evaluation.pb.h"

namespace kseek::server {

class TaskCatalog {
 public:
  // An empty catalog.
  TaskCatalog() = default;
  // Every DIR/*/task.json; a folder whose task does not load, or two tasks
  // of one name, fail the whole load, naming the file.
  static absl::StatusOr<TaskCatalog> Load(const std::string& dir);

  // By name.
  std::vector<kernelseek::v1::TaskSummary> List() const;
  // Fills `request->task` from the catalog when `request->task_name` is
  // set (and clears the name); INVALID_ARGUMENT naming the field when the
  // name is unknown, the task does not support the request's target, or
  // both a name and files are given. A request without a name is left
  // alone.
  absl::Status Resolve(kernelseek::v1::EvaluationRequest* request) const;

 private:
  struct Entry {
    TaskSpec spec;
    std::map<Target, kernelseek::v1::TaskFiles> files;  // packed, per target
  };
  std::string dir_;
  std::map<std::string, Entry> tasks_;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_TASK_CATALOG_H_
