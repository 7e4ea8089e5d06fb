// The two macros for fallible calls that return absl::Status or
// absl::StatusOr<T>: hand an error back to the caller unchanged, or go on
// with the value. Header only; no state.
#ifndef KERNELSEEK_BASE_STATUS_MACROS_H_
#define KERNELSEEK_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) once; returns it when it is an error.
#define KSEEK_RETURN_IF_ERROR(expr)                              \
  do {                                                           \
    const ::absl::Status kseek_status_ = (expr);                 \
    if (!kseek_status_.ok()) return kseek_status_;               \
  } while (0)

// `lhs = *expr` for an absl::StatusOr<T> `expr`, or returns its status.
// `lhs` may declare a variable: KSEEK_ASSIGN_OR_RETURN(auto x, ReadFile(p)).
#define KSEEK_ASSIGN_OR_RETURN(lhs, expr) \
  KSEEK_ASSIGN_OR_RETURN_IMPL_(KSEEK_STATUS_MACROS_CONCAT_(kseek_statusor_, __LINE__), lhs, expr)

#define KSEEK_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) return statusor.status();           \
  lhs = *std::move(statusor)

#define KSEEK_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define KSEEK_STATUS_MACROS_CONCAT_(a, b) KSEEK_STATUS_MACROS_CONCAT_INNER_(a, b)

#endif  // KERNELSEEK_BASE_STATUS_MACROS_H_
