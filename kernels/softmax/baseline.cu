// Baseline row softmax for the CUDA targets: the naive kernel a session
// starts from and is timed against.
//
// One thread per row, three passes over global memory in float:
// max, sum of exp(x - max), then y = exp(x - max) / sum. Neighbouring
// threads read addresses `cols` elements apart, so loads are uncoalesced;
// that (and the two re-reads) is what an optimised kernel removes.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernelseek/abi.h"

namespace {

constexpr int kThreads = 256;

__device__ float ToFloat(float v) { return v; }
__device__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ void FromFloat(float v, float* out) { *out = v; }
__device__ void FromFloat(float v, __nv_bfloat16* out) { *out = __float2bfloat16_rn(v); }

template <typename T>
__global__ void BaselineSoftmax(const T* x, T* y, int64_t rows, int64_t cols) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* row_in = x + row * cols;
  T* row_out = y + row * cols;

  float max_value = -INFINITY;
  for (int64_t j = 0; j < cols; ++j) max_value = fmaxf(max_value, ToFloat(row_in[j]));

  float sum = 0.0f;
  for (int64_t j = 0; j < cols; ++j) sum += expf(ToFloat(row_in[j]) - max_value);

  for (int64_t j = 0; j < cols; ++j) {
    FromFloat(expf(ToFloat(row_in[j]) - max_value) / sum, &row_out[j]);
  }
}

template <typename T>
void Launch(const kseek_launch_args* args, int64_t rows, int64_t cols) {
  const unsigned blocks = static_cast<unsigned>((rows + kThreads - 1) / kThreads);
  BaselineSoftmax<T><<<blocks, kThreads, 0, static_cast<cudaStream_t>(args->stream)>>>(
      static_cast<const T*>(args->tensors[0].data), static_cast<T*>(args->tensors[1].data), rows,
      cols);
}

}  // namespace

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->num_tensors != 2) return 1;
  const int64_t rows = kseek_param_get(args, "rows", 0);
  const int64_t cols = kseek_param_get(args, "cols", 0);
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (rows <= 0 || cols <= 0) return 1;
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
