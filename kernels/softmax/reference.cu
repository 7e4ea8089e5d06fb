// Reference row softmax for the CUDA targets: the kernel every other one is
// checked against, written to be evidently correct rather than fast.
//
// One block of kThreads threads per row and three passes over the row:
//   1. m = max_j x[j]
//   2. s = sum_j exp(x[j] - m)           (in double)
//   3. y[j] = exp(x[j] - m) / s          (in double, rounded once to the
//                                          output dtype: RN-even)
// Block reductions are plain shared-memory trees. Inputs are read as
// float/bf16 and widened exactly to double.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernelseek/abi.h"

namespace {

constexpr int kThreads = 256;

__device__ double ToDouble(float v) { return static_cast<double>(v); }
__device__ double ToDouble(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

__device__ void FromDouble(double v, float* out) { *out = static_cast<float>(v); }
__device__ void FromDouble(double v, __nv_bfloat16* out) { *out = __double2bfloat16(v); }

// Reduces `value` over the block; every thread gets the result.
template <typename Op>
__device__ double BlockReduce(double value, double* scratch, Op op) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + width]);
    }
    __syncthreads();
  }
  const double result = scratch[0];
  __syncthreads();
  return result;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) ReferenceSoftmax(const T* x, T* y, int64_t cols) {
  __shared__ double scratch[kThreads];
  const T* row_in = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* row_out = y + static_cast<int64_t>(blockIdx.x) * cols;

  double max_value = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
    max_value = fmax(max_value, ToDouble(row_in[j]));
  }
  max_value = BlockReduce(max_value, scratch, [](double a, double b) { return fmax(a, b); });

  double sum = 0.0;
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
    sum += exp(ToDouble(row_in[j]) - max_value);
  }
  sum = BlockReduce(sum, scratch, [](double a, double b) { return a + b; });

  for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
    FromDouble(exp(ToDouble(row_in[j]) - max_value) / sum, &row_out[j]);
  }
}

template <typename T>
void Launch(const kseek_launch_args* args, int64_t rows, int64_t cols) {
  ReferenceSoftmax<T>
      <<<static_cast<unsigned>(rows), kThreads, 0, static_cast<cudaStream_t>(args->stream)>>>(
          static_cast<const T*>(args->tensors[0].data), static_cast<T*>(args->tensors[1].data),
          cols);
}

}  // namespace

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->num_tensors != 2) return 1;
  const int64_t rows = kseek_param_get(args, "rows", 0);
  const int64_t cols = kseek_param_get(args, "cols", 0);
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (rows <= 0 || cols <= 0 || rows > INT32_MAX) return 1;
  switch (dtype) {
    case KSEEK_F32:
      Launch<float>(args, rows, cols);
      break;
    case KSEEK_BF16:
      Launch<__nv_bfloat16>(args, rows, cols);
      break;
    default:
      return 1;
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
