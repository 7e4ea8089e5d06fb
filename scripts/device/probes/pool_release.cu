// A probe for kernels/softmax (not a kernel to keep): the baseline's
// softmax written into a scratch buffer taken from the device's default
// memory pool on every call, then copied to y and freed on the stream.
// kKeepPoolMemory 0 leaves the pool's release threshold at CUDA's default
// (its memory goes back at each synchronization and is mapped again on the
// next call); 1 keeps it. scripts/device/pool_cost.sh evaluates both,
// sandboxed and --unconfined, and reads the judge's clock cross-check:
// what mapping a pool's memory costs per call, and what the sandbox adds
// (the driver's opens answered by the judge, harness/src/open_broker.h).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernelseek/abi.h"

namespace {

constexpr int kKeepPoolMemory = 0;
constexpr int kThreads = 256;

__device__ float ToFloat(float v) { return v; }
__device__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ void FromFloat(float v, float* out) { *out = v; }
__device__ void FromFloat(float v, __nv_bfloat16* out) { *out = __float2bfloat16_rn(v); }

template <typename T>
__global__ void RowSoftmax(const T* x, T* y, int64_t rows, int64_t cols) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* in = x + row * cols;
  T* out = y + row * cols;
  float m = -INFINITY;
  for (int64_t j = 0; j < cols; ++j) m = fmaxf(m, ToFloat(in[j]));
  float sum = 0.0f;
  for (int64_t j = 0; j < cols; ++j) sum += expf(ToFloat(in[j]) - m);
  for (int64_t j = 0; j < cols; ++j) FromFloat(expf(ToFloat(in[j]) - m) / sum, &out[j]);
}

template <typename T>
int Launch(const kseek_launch_args* args, int64_t rows, int64_t cols) {
  cudaStream_t stream = static_cast<cudaStream_t>(args->stream);
  static bool configured = false;
  if (!configured) {
    configured = true;
    int device = 0;
    cudaMemPool_t pool = nullptr;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) {
      return 2;
    }
    if (kKeepPoolMemory) {
      unsigned long long keep = ~0ull;
      if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
        return 3;
      }
    }
  }
  const size_t bytes = static_cast<size_t>(rows * cols) * sizeof(T);
  void* scratch = nullptr;
  if (cudaMallocAsync(&scratch, bytes, stream) != cudaSuccess) return 4;
  const unsigned blocks = static_cast<unsigned>((rows + kThreads - 1) / kThreads);
  RowSoftmax<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(args->tensors[0].data),
                                                 static_cast<T*>(scratch), rows, cols);
  cudaMemcpyAsync(args->tensors[1].data, scratch, bytes, cudaMemcpyDeviceToDevice, stream);
  cudaFreeAsync(scratch, stream);
  return 0;
}

}  // namespace

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->num_tensors != 2) return 1;
  const int64_t rows = kseek_param_get(args, "rows", 0);
  const int64_t cols = kseek_param_get(args, "cols", 0);
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (rows <= 0 || cols <= 0) return 1;
  int rc = 1;
  if (dtype == KSEEK_F32) rc = Launch<float>(args, rows, cols);
  if (dtype == KSEEK_BF16) rc = Launch<__nv_bfloat16>(args, rows, cols);
  if (rc != 0) return rc;
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
