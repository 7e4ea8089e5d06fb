// The compile driver: a kernel source to a shared library, for one target.
//
//   sm_90a  -> nvcc -gencode=arch=compute_90a,code=sm_90a ... -shared
//   sm_100a -> nvcc -gencode=arch=compute_100a,code=sm_100a ... -shared
//   host    -> c++ -O3 -march=native ... -shared
//
// The full compiler output and the ptxas resource report (registers, shared
// memory, stack, spills) are returned. Results are cached on disk under
// `cache_dir`, keyed by SHA-256 of source + flags + compiler version; a
// cache hit returns the stored library and log. Safe to call from several
// threads and processes at once (entries are written to a temporary name
// and renamed).
#ifndef KERNELSEEK_HARNESS_COMPILE_H_
#define KERNELSEEK_HARNESS_COMPILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"

namespace kseek {

struct CompileRequest {
  Target target = Target::kHost;
  std::string source;           // the source text
  std::string source_name;      // e.g. "kernel.cu", for messages
  std::vector<std::string> include_dirs;  // besides the ABI header's
  std::string cache_dir;        // where libraries are kept
  double timeout_s = 300;
};

struct CompileOutput {
  CompileInfo info;      // ok, cached, report, command, log
  std::string library;   // path of the .so when info.ok
};

// Errors only for a broken environment (no compiler, unwritable cache);
// a source that fails to compile is info.ok == false with the log.
absl::StatusOr<CompileOutput> Compile(const CompileRequest& req);

// Path of the compiler used for a target: $KSEEK_NVCC, else
// $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, nvcc on PATH; $KSEEK_CXX,
// $CXX, else c++. Empty when none is found.
std::string CompilerFor(Target t);

// Folds a ptxas report ("ptxas info : Used N registers, ...") into info.
void ParsePtxasReport(const std::string& log, CompileInfo* info);

// The directory holding kernelseek/abi.h, found next to the executable
// (../include or the source tree) or from $KSEEK_INCLUDE_DIR.
std::string AbiIncludeDir();

// Default cache folder: $KSEEK_CACHE_DIR, else $XDG_CACHE_HOME/kernelseek/
// compile, else ~/.cache/kernelseek/compile.
std::string DefaultCacheDir();

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_COMPILE_H_
