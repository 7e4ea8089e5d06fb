// CPU fp64 oracle for flash_attention_fwd, behind the candidate ABI.
//
// Used only by tests/fa_reference_gpu_test.cc as the reference of a small
// copy of the task, to check reference.cu and baseline.cu against attention
// computed in double precision. It waits for the stream, copies q, k and v
// to the host, computes every row with a plain max / exp / sum in double,
// and copies o (rounded to the nearest 16-bit value) and lse back. Slow on
// purpose and only fit for small scenarios.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernelseek/abi.h"

namespace {

const char* g_error = "";

double ToDouble(__nv_bfloat16 x) { return double(__bfloat162float(x)); }
double ToDouble(__half x) { return double(__half2float(x)); }
void FromDouble(double x, __nv_bfloat16* out) {
  *out = __float2bfloat16_rn(float(x));
}
void FromDouble(double x, __half* out) { *out = __float2half_rn(float(x)); }

template <typename T>
bool CopyToHost(const kseek_tensor& t, size_t n, cudaStream_t stream,
                std::vector<double>* out) {
  std::vector<T> raw(n);
  if (cudaMemcpyAsync(raw.data(), t.data, n * sizeof(T),
                      cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)
    return false;
  out->resize(n);
  for (size_t i = 0; i < n; ++i) (*out)[i] = ToDouble(raw[i]);
  return true;
}

template <typename T>
int Run(const kseek_launch_args* args) {
  const int64_t batch = kseek_param_get(args, "batch", 0);
  const int64_t sq = kseek_param_get(args, "seqlen_q", 0);
  const int64_t sk = kseek_param_get(args, "seqlen_k", 0);
  const int64_t hq = kseek_param_get(args, "heads_q", 0);
  const int64_t hkv = kseek_param_get(args, "heads_kv", 0);
  const int64_t d = kseek_param_get(args, "head_dim", 0);
  const bool causal = kseek_param_get(args, "causal", 0) != 0;
  if (batch < 1 || sq < 1 || sk < 1 || hkv < 1 || d < 1 || hq % hkv != 0) {
    g_error = "bad shape";
    return 1;
  }
  cudaStream_t stream = (cudaStream_t)args->stream;
  const size_t nq = size_t(batch * sq * hq * d);
  const size_t nkv = size_t(batch * sk * hkv * d);
  std::vector<double> q, k, v;
  if (!CopyToHost<T>(args->tensors[0], nq, stream, &q) ||
      !CopyToHost<T>(args->tensors[1], nkv, stream, &k) ||
      !CopyToHost<T>(args->tensors[2], nkv, stream, &v)) {
    g_error = "copy of q, k, v to the host failed";
    return 1;
  }

  std::vector<T> o(nq);
  std::vector<float> lse(size_t(batch * hq * sq));
  const double scale = 1.0 / std::sqrt(double(d));
  std::vector<double> s(static_cast<size_t>(sk));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t g = h / (hq / hkv);
      for (int64_t i = 0; i < sq; ++i) {
        const double* qi = &q[size_t(((b * sq + i) * hq + h) * d)];
        // Keys 0 .. last-1 are seen (bottom-right causal alignment).
        const int64_t last =
            causal ? std::min(sk, std::max<int64_t>(0, i + sk - sq + 1)) : sk;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < last; ++j) {
          const double* kj = &k[size_t(((b * sk + j) * hkv + g) * d)];
          double dot = 0.0;
          for (int64_t x = 0; x < d; ++x) dot += qi[x] * kj[x];
          s[size_t(j)] = dot * scale;
          m = std::max(m, s[size_t(j)]);
        }
        double l = 0.0;
        std::vector<double> acc(size_t(d), 0.0);
        for (int64_t j = 0; j < last; ++j) {
          const double p = std::exp(s[size_t(j)] - m);
          l += p;
          const double* vj = &v[size_t(((b * sk + j) * hkv + g) * d)];
          for (int64_t x = 0; x < d; ++x) acc[size_t(x)] += p * vj[x];
        }
        T* oi = o.data() + ((b * sq + i) * hq + h) * d;
        for (int64_t x = 0; x < d; ++x)
          FromDouble(last > 0 ? acc[size_t(x)] / l : 0.0, oi + x);
        lse[size_t((b * hq + h) * sq + i)] =
            last > 0 ? float(m + std::log(l))
                     : -std::numeric_limits<float>::infinity();
      }
    }
  }

  if (cudaMemcpyAsync(args->tensors[3].data, o.data(), nq * sizeof(T),
                      cudaMemcpyHostToDevice, stream) != cudaSuccess ||
      cudaMemcpyAsync(args->tensors[4].data, lse.data(),
                      lse.size() * sizeof(float), cudaMemcpyHostToDevice,
                      stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    g_error = "copy of o, lse to the device failed";
    return 1;
  }
  return 0;
}

}  // namespace

extern "C" KSEEK_EXPORT const char* kseek_error_message(void) {
  return g_error;
}

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->abi_version != KSEEK_ABI_VERSION || args->num_tensors != 5) {
    g_error = "expected ABI version 1 and tensors q, k, v, o, lse";
    return 1;
  }
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (dtype == KSEEK_BF16) return Run<__nv_bfloat16>(args);
  if (dtype == KSEEK_F16) return Run<__half>(args);
  g_error = "dtype must be bf16 or f16";
  return 1;
}
