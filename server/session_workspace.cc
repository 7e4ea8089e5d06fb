// Session workspaces (see session_workspace.h).
#include "server/session_workspace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "proto/request.h"
#include "server/auth.h"

namespace kseek::server {

namespace fs = std::filesystem;

namespace {

absl::Status WriteIfAbsent(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::exists(path, ec)) return absl::OkStatus();
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat(path.string(), ": cannot write"));
  return absl::OkStatus();
}

// The targets of `#include "..."` lines in `source` (not <...>: those come
// from the compiler's paths).
std::vector<std::string> QuotedIncludes(const std::string& source) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> out;
  std::istringstream lines(source);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, include_line)) out.push_back(m[1].str());
  }
  return out;
}

}  // namespace

absl::StatusOr<kernelseek::v1::TaskFiles> WorkspaceTask(const kernelseek::v1::TaskFiles& task) {
  const auto& files = task.files();
  auto task_json = files.find("task.json");
  if (task_json == files.end()) return absl::InvalidArgumentError("task.files: no task.json");
  nlohmann::json doc = nlohmann::json::parse(task_json->second, nullptr, false);
  if (!doc.is_object() || !doc.contains("sources") || !doc["sources"].is_object()) {
    return absl::InvalidArgumentError("task.files[task.json]: no \"sources\" object");
  }
  // {path, named by task.json}: a named source must be there; an include
  // that is not is found elsewhere by the compiler (kernelseek/abi.h).
  std::vector<std::pair<std::string, bool>> pending;
  for (auto& [family, sources] : doc["sources"].items()) {
    if (!sources.is_object()) continue;
    sources.erase("kernels");
    for (const char* role : {"reference", "baseline"}) {
      if (sources.contains(role) && sources[role].is_string()) {
        pending.emplace_back(sources[role].get<std::string>(), true);
      }
    }
  }
  kernelseek::v1::TaskFiles kept;
  (*kept.mutable_files())["task.json"] = doc.dump(2) + "\n";
  while (!pending.empty()) {
    const std::string path = fs::path(pending.back().first).lexically_normal().string();
    const bool named = pending.back().second;
    pending.pop_back();
    if (kept.files().contains(path)) continue;
    auto it = files.find(path);
    if (it == files.end()) {
      if (!named) continue;
      return absl::InvalidArgumentError(absl::StrCat("task.files[", path, "]: missing"));
    }
    (*kept.mutable_files())[path] = it->second;
    const fs::path dir = fs::path(path).parent_path();
    for (const std::string& include : QuotedIncludes(it->second)) {
      const std::string resolved = (dir / include).lexically_normal().string();
      if (!absl::StartsWith(resolved, "..") && resolved[0] != '/') {
        pending.emplace_back(resolved, false);
      }
    }
  }
  return kept;
}

std::string BriefText(const std::string& task, const kernelseek::v1::CreateSessionRequest& spec,
                      double goal_speedup, const std::string& bank_text,
                      const std::string& kseek) {
  const kernelseek::v1::SessionBudget& b = spec.budget();
  std::string budget = absl::StrFormat("%d turns, %d evaluations (yours and the coordinator's), "
                                       "%g minutes of wall time",
                                       b.max_turns(), b.max_evaluations(), b.max_minutes());
  if (b.max_usd() > 0) absl::StrAppendFormat(&budget, ", %.2f USD of model cost", b.max_usd());
  std::string brief = absl::StrFormat(
      "# Brief\n"
      "\n"
      "Make `kernel.cu` in this folder faster for the task `%s` on the target `%s`.\n"
      "\n"
      "Goal: correct on every scenario of the task, and a geometric-mean speedup of at least\n"
      "%.2fx over the task's baseline. Only the coordinator decides that the goal is met: after\n"
      "each of your turns it evaluates kernel.cu itself (every scenario, fresh inputs). Saying\n"
      "that you are done does not end the work.\n"
      "\n"
      "Budget: %s.\n"
      "\n"
      "The task is in this folder (task.json, the reference and the baseline). Evaluate your\n"
      "kernel, in this folder, with\n"
      "\n"
      "    %s eval kernel.cu\n"
      "\n"
      "(the task and the target `%s` are this folder's; --json for machine-readable\n"
      "output). Only an evaluation on every scenario of the task can be your best. Work only\n"
      "in this folder.\n",
      task, spec.target(), goal_speedup, budget, kseek, spec.target());
  if (spec.self_ask()) absl::StrAppend(&brief, "\n", bank_text);
  return brief;
}

absl::Status PrepareWorkspace(const std::string& dir,
                              const kernelseek::v1::CreateSessionRequest& spec,
                              const std::string& brief) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir, ": cannot create the workspace: ", ec.message()));
  if (!fs::exists(fs::path(dir) / "task.json", ec)) {
    absl::Status st = UnpackTask(spec.task(), dir);
    if (!st.ok()) return st;
  }
  absl::Status st = WriteIfAbsent(fs::path(dir) / kWorkspaceKernel, spec.kernel_source());
  if (st.ok()) st = WriteIfAbsent(fs::path(dir) / kWorkspaceBrief, brief);
  return st;
}

absl::StatusOr<std::string> ReadWorkspaceKernel(const std::string& dir, size_t max_bytes) {
  const std::string path = absl::StrCat(dir, "/", kWorkspaceKernel);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        kWorkspaceKernel, ": cannot open it",
        errno == ELOOP ? " (a symbolic link: only a regular file is read)" : "", ": ",
        std::strerror(errno)));
  }
  struct stat st;
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_nlink != 1) {
    why = absl::StrCat("a hard link (", st.st_nlink, " names for one file)");
  } else if (static_cast<size_t>(st.st_size) > max_bytes) {
    why = absl::StrCat(st.st_size, " bytes, more than the limit of ", max_bytes);
  }
  std::string text;
  if (why.empty()) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (!why.empty()) return absl::FailedPreconditionError(absl::StrCat(kWorkspaceKernel, ": ", why));
  return text;
}

absl::Status WriteWorkspaceClientConfig(const std::string& dir, const std::string& coordinator,
                                        const std::string& token, const std::string& target) {
  // The workspace may be the agent's: whatever it left at these names is
  // removed, not followed (this runs while none of its processes does).
  std::string config_dir = dir + "/.kernelseek";
  struct stat st;
  std::error_code ec;
  if (::lstat(config_dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) fs::remove(config_dir, ec);
  if (::mkdir(config_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat(config_dir, ": cannot create: ", std::strerror(errno)));
  }
  fs::remove(config_dir + "/client.json.tmp", ec);
  nlohmann::json config = {{"coordinator", coordinator}, {"token", token}, {"target", target}};
  return WriteSecretFile(config_dir + "/client.json", config.dump(2) + "\n");
}

}  // namespace kseek::server
