// Kernels of the judge (kseek-runner) on a CUDA device: random inputs, the
// check that an input is unchanged, and the comparison of an output with
// the reference's, so that no tensor crosses the bus during a scenario.
// Built by nvcc into a fat binary that runner_cuda.cc embeds and loads with
// cuModuleLoadData (runner_device.h says what each computes; the host
// device does the same on the CPU, runner_data.h).
//
// Element types are the ABI's kseek_dtype; distributions: 0 normal (a
// mean, b stddev), 1 uniform [a, b).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/src/compare_partial.h"
#include "kernelseek/abi.h"

using kseek::ComparePartial;

namespace {

enum Dtype {
  kF32 = KSEEK_F32,
  kF64 = KSEEK_F64,
  kF16 = KSEEK_F16,
  kBf16 = KSEEK_BF16,
  kI32 = KSEEK_I32,
  kI64 = KSEEK_I64,
  kU8 = KSEEK_U8,
};

__device__ unsigned long long Mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Element i's value: a pure function of (seed, i). Two 32-bit uniforms of
// one 64-bit hash, then Box-Muller (normal) or the first one (uniform).
__device__ double Draw(unsigned long long seed, unsigned long long i, int kind, double a,
                       double b) {
  const unsigned long long h = Mix(seed ^ Mix(i));
  const double u1 = (static_cast<double>(h >> 32) + 0.5) * 0x1.0p-32;  // (0, 1)
  const double u2 = static_cast<double>(h & 0xffffffffULL) * 0x1.0p-32;  // [0, 1)
  if (kind == 1) return a + (b - a) * u1;
  const double z = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
  return a + b * z;
}

template <typename T>
__device__ T ClampRound(double v, double lo, double hi) {
  const double r = rint(v);
  if (r <= lo) return static_cast<T>(lo);
  if (r >= hi) return static_cast<T>(hi);
  return static_cast<T>(r);
}

__device__ void Store(void* out, unsigned long long i, int dtype, double v) {
  switch (dtype) {
    case kF32: static_cast<float*>(out)[i] = static_cast<float>(v); break;
    case kF64: static_cast<double*>(out)[i] = v; break;
    case kF16: static_cast<__half*>(out)[i] = __float2half_rn(static_cast<float>(v)); break;
    case kBf16:
      static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(static_cast<float>(v));
      break;
    case kI32:
      static_cast<int*>(out)[i] = ClampRound<int>(v, -2147483648.0, 2147483647.0);
      break;
    case kI64:
      static_cast<long long*>(out)[i] =
          ClampRound<long long>(v, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case kU8: static_cast<unsigned char*>(out)[i] = ClampRound<unsigned char>(v, 0.0, 255.0); break;
  }
}

__device__ double Load(const void* p, unsigned long long i, int dtype) {
  switch (dtype) {
    case kF32: return static_cast<const float*>(p)[i];
    case kF64: return static_cast<const double*>(p)[i];
    case kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case kBf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case kI32: return static_cast<const int*>(p)[i];
    case kI64: return static_cast<double>(static_cast<const long long*>(p)[i]);
    case kU8: return static_cast<const unsigned char*>(p)[i];
  }
  return 0;
}

constexpr int kThreads = 256;

}  // namespace

// out[0, count) from the distribution; grid-stride.
extern "C" __global__ void kseek_fill_random(void* out, unsigned long long count,
                                             unsigned long long seed, int dtype, int kind,
                                             double a, double b) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    Store(out, i, dtype, Draw(seed, i, kind, a, b));
  }
}

// *first = min(*first, index of the first byte where a and b differ); the
// caller sets *first to all ones before.
extern "C" __global__ void kseek_first_difference(const unsigned char* a, const unsigned char* b,
                                                  unsigned long long bytes,
                                                  unsigned long long* first) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < bytes; i += stride) {
    if (a[i] != b[i]) {
      atomicMin(first, i);
      return;  // this thread's later bytes come after i
    }
  }
}

// Block k compares elements [k * chunk, min(count, (k + 1) * chunk)) and
// writes partials[k]; the host merges the partials in block order. Every
// thread takes the elements i = begin + threadIdx.x + j * kThreads through
// compare_partial.h's rule, and the threads' partials are merged pairwise
// in a fixed tree, so the sums do not depend on scheduling.
extern "C" __global__ void __launch_bounds__(kThreads)
    kseek_compare(const void* cand, const void* ref, unsigned long long count, int dtype,
                  unsigned long long chunk, ComparePartial* partials) {
  // Raw storage: a __shared__ array may not have a constructor.
  __shared__ alignas(ComparePartial) unsigned char storage[kThreads * sizeof(ComparePartial)];
  ComparePartial* parts = reinterpret_cast<ComparePartial*>(storage);
  ComparePartial p;
  double diff2 = 0, ref2 = 0, max_abs = 0;
  const unsigned long long begin = static_cast<unsigned long long>(blockIdx.x) * chunk;
  unsigned long long end = begin + chunk;
  if (end > count) end = count;
  for (unsigned long long i = begin + threadIdx.x; i < end; i += kThreads) {
    kseek::CompareElement(i, Load(cand, i, dtype), Load(ref, i, dtype), diff2, ref2, max_abs, p);
  }
  p.diff2 = diff2;
  p.ref2 = ref2;
  p.max_abs = max_abs;
  parts[threadIdx.x] = p;
  __syncthreads();
  for (int width = 1; width < kThreads; width *= 2) {
    const int t = threadIdx.x;
    if (t % (2 * width) == 0) kseek::MergeComparePartial(parts[t], parts[t + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = parts[0];
}
