// Starting a child process the way every KernelSeek child is started.
#ifndef KSEEK_HARNESS_PROCESS_SPAWN_H_
#define KSEEK_HARNESS_PROCESS_SPAWN_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace kseek {

struct SpawnOptions {
  int stdout_fd = -1;      // the child's stdout (dup2'd)
  int stderr_fd = -1;      // the child's stderr (may equal stdout_fd)
  std::string cwd;         // working directory; empty: the parent's
  char* const* envp = nullptr;  // environment; nullptr: the parent's
};

// Runs `path` with `argv` (no shell) in a new process group, so that the
// whole group can be signalled, with stdin from /dev/null, an empty signal
// mask and default dispositions for SIGPIPE, SIGINT, SIGTERM, SIGHUP,
// SIGQUIT and SIGCHLD. Returns 0 and sets *pid, or the errno value of the
// failure (ENOENT, EACCES, ... when the program cannot be executed).
int SpawnInNewGroup(const std::string& path, const std::vector<std::string>& argv,
                    const SpawnOptions& options, pid_t* pid);

}  // namespace kseek

#endif  // KSEEK_HARNESS_PROCESS_SPAWN_H_
