// Not a kernel: a probe of which CUDA allocations the harness's sandbox
// lets through (harness/README.md, "What the filter costs honest kernels").
// Run through kseek eval on one scenario, in the sandbox and with
// --unconfined; every call "fails" on purpose so that its message reaches
// the verdict: "probe: malloc ok; malloc_async ok|error; pool_create
// ...; malloc_from_pool ...", then what the process printed (the
// sandbox's refusals, with the paths). bench/plans/pool_probe.sh runs it.
#include <cuda_runtime.h>

#include <cstdio>

#include "kernelseek/abi.h"

namespace {
char g_message[400];

const char* Outcome(cudaError_t e) { return e == cudaSuccess ? "ok" : cudaGetErrorName(e); }
}  // namespace

extern "C" KSEEK_EXPORT const char* kseek_error_message() { return g_message; }

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  void* p = nullptr;
  const cudaError_t plain = cudaMalloc(&p, 1 << 20);
  if (plain == cudaSuccess) cudaFree(p);
  p = nullptr;
  const cudaError_t async = cudaMallocAsync(&p, 1 << 20, stream);
  if (async == cudaSuccess) cudaFreeAsync(p, stream);
  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  int device = 0;
  cudaGetDevice(&device);
  props.location.id = device;
  const cudaError_t created = cudaMemPoolCreate(&pool, &props);
  cudaError_t from_pool = cudaErrorNotSupported;
  if (created == cudaSuccess) {
    p = nullptr;
    from_pool = cudaMallocFromPoolAsync(&p, 1 << 20, pool, stream);
    if (from_pool == cudaSuccess) cudaFreeAsync(p, stream);
    cudaStreamSynchronize(stream);
    cudaMemPoolDestroy(pool);
  }
  cudaStreamSynchronize(stream);
  cudaGetLastError();
  snprintf(g_message, sizeof(g_message),
           "probe: malloc %s; malloc_async %s; pool_create %s; malloc_from_pool %s",
           Outcome(plain), Outcome(async), Outcome(created), Outcome(from_pool));
  return 1;
}
