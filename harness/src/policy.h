// The static policy check: what a kernel source may not use, found before
// compiling, reported with the offending line.
//
// The built-in policy forbids vendor libraries (CUTLASS, CuTe, cuBLAS,
// cuDNN, ...), stream/graph/event creation, host threads, and file,
// process and dynamic-loading calls; a task adds its own entries. The check
// reads the source text with comments and string literals blanked, so a
// word in a comment neither trips it nor hides from it.
#ifndef KERNELSEEK_HARNESS_POLICY_H_
#define KERNELSEEK_HARNESS_POLICY_H_

#include <string>
#include <vector>

#include "harness/src/task.h"

namespace kseek {

struct PolicyViolation {
  int line = 0;          // 1-based
  std::string text;      // the source line, trimmed
  std::string rule;      // e.g. "forbidden include: cublas"
};

// Returns every violation in `source` (empty: the source may be compiled).
// `family` is "cuda" or "host".
std::vector<PolicyViolation> CheckPolicy(const std::string& source,
                                         const std::string& family,
                                         const Policy& task_policy);

// "kernel.cu:12: forbidden include: cublas_v2.h: #include <cublas_v2.h>"
std::string DescribeViolation(const std::string& filename,
                              const PolicyViolation& v);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_POLICY_H_
