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

#include "kernelseek/abi.h"

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

// What one block of a comparison found; the layout of
// kseek::ComparePartial (runner_data.h).
struct Partial {
  double diff2, ref2, max_abs;
  unsigned long long nan_count, first_nan;
  unsigned long long ref_nan_count, first_ref_nan;
  unsigned long long inf_count, first_inf;
  double inf_cand, inf_ref;
};

constexpr int kThreads = 256;

// Folds b into a, b's elements coming after a's.
__device__ void Fold(Partial& a, const Partial& b) {
  a.diff2 += b.diff2;
  a.ref2 += b.ref2;
  a.max_abs = fmax(a.max_abs, b.max_abs);
  if (a.nan_count == 0) a.first_nan = b.first_nan;
  a.nan_count += b.nan_count;
  if (a.ref_nan_count == 0) a.first_ref_nan = b.first_ref_nan;
  a.ref_nan_count += b.ref_nan_count;
  if (a.inf_count == 0) {
    a.first_inf = b.first_inf;
    a.inf_cand = b.inf_cand;
    a.inf_ref = b.inf_ref;
  }
  a.inf_count += b.inf_count;
}

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
// writes partials[k]; the host folds the partials in block order. Every
// thread takes the elements i = begin + threadIdx.x + j * kThreads, and the
// threads are folded in index order pairwise (a fixed tree), so the sums do
// not depend on scheduling.
extern "C" __global__ void __launch_bounds__(kThreads)
    kseek_compare(const void* cand, const void* ref, unsigned long long count, int dtype,
                  unsigned long long chunk, Partial* partials) {
  __shared__ Partial parts[kThreads];
  Partial p = {};
  const unsigned long long begin = static_cast<unsigned long long>(blockIdx.x) * chunk;
  unsigned long long end = begin + chunk;
  if (end > count) end = count;
  for (unsigned long long i = begin + threadIdx.x; i < end; i += kThreads) {
    const double x = Load(cand, i, dtype);
    const double r = Load(ref, i, dtype);
    if (isfinite(x) && isfinite(r)) {
      const double d = x - r;
      p.diff2 += d * d;
      p.ref2 += r * r;
      p.max_abs = fmax(p.max_abs, fabs(d));
      continue;
    }
    // Every thread's elements ascend, so its first is its smallest.
    if (isnan(x)) {
      if (p.nan_count++ == 0) p.first_nan = i;
      continue;
    }
    if (isnan(r)) {
      if (p.ref_nan_count++ == 0) p.first_ref_nan = i;
      continue;
    }
    if (x == r) continue;  // the same infinity
    if (p.inf_count++ == 0) {
      p.first_inf = i;
      p.inf_cand = x;
      p.inf_ref = r;
    }
  }
  parts[threadIdx.x] = p;
  __syncthreads();
  // Thread t's elements interleave with the others', so "first" is the
  // smallest index over the threads that found one, not the fold order's.
  for (int width = 1; width < kThreads; width *= 2) {
    const int t = threadIdx.x;
    if (t % (2 * width) == 0) {
      Partial& a = parts[t];
      const Partial& b = parts[t + width];
      const bool nan_b_first = b.nan_count > 0 && (a.nan_count == 0 || b.first_nan < a.first_nan);
      const bool ref_nan_b_first =
          b.ref_nan_count > 0 && (a.ref_nan_count == 0 || b.first_ref_nan < a.first_ref_nan);
      const bool inf_b_first = b.inf_count > 0 && (a.inf_count == 0 || b.first_inf < a.first_inf);
      Partial m = a;
      Fold(m, b);
      if (nan_b_first) m.first_nan = b.first_nan;
      else if (a.nan_count > 0) m.first_nan = a.first_nan;
      if (ref_nan_b_first) m.first_ref_nan = b.first_ref_nan;
      else if (a.ref_nan_count > 0) m.first_ref_nan = a.first_ref_nan;
      if (inf_b_first) {
        m.first_inf = b.first_inf;
        m.inf_cand = b.inf_cand;
        m.inf_ref = b.inf_ref;
      } else if (a.inf_count > 0) {
        m.first_inf = a.first_inf;
        m.inf_cand = a.inf_cand;
        m.inf_ref = a.inf_ref;
      }
      a = m;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = parts[0];
}
