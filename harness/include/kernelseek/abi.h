/*
 * KernelSeek candidate ABI, version 1.
 *
 * Every kernel the harness loads -- a task's reference, its baseline and
 * each candidate -- is a shared library exporting one C function:
 *
 *   extern "C" int kseek_launch(const kseek_launch_args* args);
 *
 * The harness calls it once per evaluation call with the scenario's
 * parameters and the task's tensors in the order task.json declares them.
 * For CUDA targets the tensor pointers are device pointers and `stream` is
 * the CUDA stream to launch on (a cudaStream_t / CUstream); all work must be
 * enqueued on that stream and the function must return without
 * synchronising. For the host target the pointers are host pointers,
 * `stream` is NULL, and the work is done when the function returns.
 *
 * Return 0 on success. A non-zero return is reported as an error of the
 * call (with kseek_error_message() when the library exports it).
 *
 * Ownership: the harness owns every buffer; a kernel must not keep a
 * pointer across calls, write to an `in` tensor, or free anything it did not
 * allocate. The header is plain C so that host and CUDA sources share it.
 */
#ifndef KERNELSEEK_ABI_H_
#define KERNELSEEK_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KSEEK_ABI_VERSION 1
#define KSEEK_MAX_DIMS 8

/* Element types. The numeric values are part of the ABI. */
typedef enum kseek_dtype {
  KSEEK_F32 = 0,
  KSEEK_F16 = 1,
  KSEEK_BF16 = 2,
  KSEEK_F64 = 3,
  KSEEK_I32 = 4,
  KSEEK_I64 = 5,
  KSEEK_U8 = 6
} kseek_dtype;

/* One tensor: a pointer plus shape and strides, both in elements. */
typedef struct kseek_tensor {
  const char* name; /* the task's name for it, e.g. "q" */
  void* data;
  int32_t dtype; /* a kseek_dtype */
  int32_t ndim;
  int64_t shape[KSEEK_MAX_DIMS];
  int64_t strides[KSEEK_MAX_DIMS];
} kseek_tensor;

/* One named integer parameter of the scenario. A parameter of type dtype
 * carries its kseek_dtype value. */
typedef struct kseek_param {
  const char* name;
  int64_t value;
} kseek_param;

typedef struct kseek_launch_args {
  uint32_t abi_version; /* KSEEK_ABI_VERSION of the caller */
  int32_t num_params;
  const kseek_param* params;
  int32_t num_tensors;
  const kseek_tensor* tensors;
  void* stream; /* cudaStream_t for CUDA targets, NULL for host */
} kseek_launch_args;

typedef int (*kseek_launch_fn)(const kseek_launch_args* args);

/* Optional: a short message describing the last non-zero return. */
typedef const char* (*kseek_error_message_fn)(void);

#if defined(__GNUC__)
#define KSEEK_EXPORT __attribute__((visibility("default")))
#else
#define KSEEK_EXPORT
#endif

/* Looks a parameter up by name; returns `fallback` when absent. */
static inline int64_t kseek_param_get(const kseek_launch_args* args,
                                      const char* name, int64_t fallback) {
  for (int32_t i = 0; i < args->num_params; ++i) {
    const char* a = args->params[i].name;
    const char* b = name;
    while (*a && *a == *b) {
      ++a;
      ++b;
    }
    if (*a == 0 && *b == 0) return args->params[i].value;
  }
  return fallback;
}

/* Size in bytes of one element of `dtype`, 0 for an unknown value. */
static inline size_t kseek_dtype_size(int32_t dtype) {
  switch (dtype) {
    case KSEEK_F32: return 4;
    case KSEEK_F16: return 2;
    case KSEEK_BF16: return 2;
    case KSEEK_F64: return 8;
    case KSEEK_I32: return 4;
    case KSEEK_I64: return 8;
    case KSEEK_U8: return 1;
    default: return 0;
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KERNELSEEK_ABI_H_ */
