// Random inputs, element conversions and output comparison for
// kseek-runner (runner_data.h).
#include "harness/src/runner_data.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kseek {

namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Threads for chunked work: enough to keep memory busy, few enough to
// leave the machine usable.
constexpr size_t kMaxThreads = 16;

// Runs fn(c) for every chunk c in [0, chunks), on up to kMaxThreads threads
// that take chunks in turn; returns when all are done.
template <typename Fn>
void ForEachChunk(size_t chunks, const Fn& fn) {
  const size_t threads = std::min<size_t>(
      {chunks, std::max(1u, std::thread::hardware_concurrency()), kMaxThreads});
  if (threads <= 1) {
    for (size_t c = 0; c < chunks; ++c) fn(c);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t c; (c = next.fetch_add(1)) < chunks;) fn(c);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

template <typename T>
T ClampRound(double v) {
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  double r = std::nearbyint(v);
  if (r <= lo) return std::numeric_limits<T>::lowest();
  if (r >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// The element types as doubles.
struct LoadF32 {
  double operator()(const void* p, size_t i) const { return static_cast<const float*>(p)[i]; }
};
struct LoadF64 {
  double operator()(const void* p, size_t i) const { return static_cast<const double*>(p)[i]; }
};

// Every binary16 value as float, by bit pattern.
const float* HalfTable() {
  static const float* const table = [] {
    auto* t = new float[65536];
    for (uint32_t h = 0; h < 65536; ++h) t[h] = HalfToFloat(static_cast<uint16_t>(h));
    return t;
  }();
  return table;
}

struct LoadF16 {
  const float* table = HalfTable();
  double operator()(const void* p, size_t i) const {
    return table[static_cast<const uint16_t*>(p)[i]];
  }
};
struct LoadBf16 {
  double operator()(const void* p, size_t i) const {
    return Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
  }
};
struct LoadI32 {
  double operator()(const void* p, size_t i) const { return static_cast<const int32_t*>(p)[i]; }
};
struct LoadI64 {
  double operator()(const void* p, size_t i) const {
    return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  }
};
struct LoadU8 {
  double operator()(const void* p, size_t i) const { return static_cast<const uint8_t*>(p)[i]; }
};

std::string Num(double v) { return absl::StrFormat("%.4g", v); }

template <typename Load>
ComparePartial CompareRange(const void* cand, const void* ref, size_t begin, size_t end,
                     const Load& load) {
  ComparePartial p;
  double diff2 = 0, ref2 = 0, max_abs = 0;  // kept in registers
  for (size_t i = begin; i < end; ++i) {
    CompareElement(i, load(cand, i), load(ref, i), diff2, ref2, max_abs, p);
  }
  p.diff2 = diff2;
  p.ref2 = ref2;
  p.max_abs = max_abs;
  return p;
}

template <typename Load>
Comparison Compare(const std::string& name, const void* cand, const void* ref,
                   size_t count, const Tolerance& tol, Load load) {
  std::vector<ComparePartial> parts((count + kDataChunk - 1) / kDataChunk);
  ForEachChunk(parts.size(), [&](size_t k) {
    parts[k] = CompareRange(cand, ref, k * kDataChunk,
                            std::min(count, (k + 1) * kDataChunk), load);
  });
  return FinishComparison(name, count, tol, parts);
}

}  // namespace

Comparison FinishComparison(const std::string& name, size_t count, const Tolerance& tol,
                            const std::vector<ComparePartial>& parts) {
  Comparison c;
  c.result.tensor = name;
  // In order: the sums are the same for any number of threads.
  ComparePartial all;
  for (const ComparePartial& p : parts) MergeComparePartial(all, p);
  double rel = all.ref2 > 0 ? std::sqrt(all.diff2) / std::sqrt(all.ref2) : std::sqrt(all.diff2);
  double max_abs = all.max_abs;
  if (!std::isfinite(rel)) rel = DBL_MAX;
  if (!std::isfinite(max_abs)) max_abs = DBL_MAX;
  c.result.rel_l2 = rel;
  c.result.max_abs = max_abs;

  std::vector<std::string> problems;
  if (all.nan_count > 0) {
    problems.push_back(absl::StrCat("NaN at element ", all.first_nan, " (", all.nan_count,
                                    " of ", count, " elements are NaN)"));
  }
  if (all.inf_count > 0) {
    problems.push_back(absl::StrCat("element ", all.first_inf, " is ", Num(all.inf_cand),
                                    " where the reference has ", Num(all.inf_ref), " (",
                                    all.inf_count, " such elements)"));
  }
  if (all.ref_nan_count > 0) {
    problems.push_back(absl::StrCat("the reference has NaN at element ",
                                    all.first_ref_nan, " (", all.ref_nan_count,
                                    " elements); the task's reference is broken"));
  }
  if (rel > tol.rel_l2) {
    problems.push_back(absl::StrCat("rel_l2 ", Num(rel), " exceeds ", Num(tol.rel_l2)));
  }
  if (max_abs > tol.max_abs) {
    problems.push_back(absl::StrCat("max_abs ", Num(max_abs), " exceeds ", Num(tol.max_abs)));
  }
  c.result.within = problems.empty();
  if (!problems.empty()) {
    c.error = absl::StrCat("output ", name, ": ", absl::StrJoin(problems, "; "));
  }
  return c;
}

namespace {

// The ziggurat of Marsaglia and Tsang for the standard normal, with the
// layer index and the abscissa taken from separate bits of one draw
// (Doornik's variant): 128 layers of equal area kZigArea, the base layer
// ending at kZigTail where the tail begins.
constexpr int kZigLayers = 128;
constexpr double kZigTail = 3.442619855899;
constexpr double kZigArea = 9.91256303526217e-3;

struct Ziggurat {
  double x[kZigLayers + 1];  // right edges; x[1] = kZigTail, x[kZigLayers] = 0
  double ratio[kZigLayers];  // x[i + 1] / x[i]: below it layer i is all inside

  Ziggurat() {
    double f = std::exp(-0.5 * kZigTail * kZigTail);
    x[0] = kZigArea / f;
    x[1] = kZigTail;
    for (int i = 2; i < kZigLayers; ++i) {
      x[i] = std::sqrt(-2.0 * std::log(kZigArea / x[i - 1] + f));
      f = std::exp(-0.5 * x[i] * x[i]);
    }
    x[kZigLayers] = 0.0;
    for (int i = 0; i < kZigLayers; ++i) ratio[i] = x[i + 1] / x[i];
  }
};

const Ziggurat& Zig() {
  static const Ziggurat zig;  // trivially destructible
  return zig;
}

// Outside the fast path of ZigguratNormal, for layer i and the abscissa u
// in [-1, 1): a draw from the tail beyond kZigTail (i = 0), or whether the
// point of the wedge of layer i (> 0) is accepted, and its value.
bool ZigguratSlow(Rng& rng, const Ziggurat& z, int i, double u, double* value) {
  if (i == 0) {
    // Marsaglia's tail method; 1 - Uniform() is in (0, 1], so the
    // logarithms stay finite.
    double a, b;
    do {
      a = -std::log(1.0 - rng.Uniform()) / kZigTail;
      b = -std::log(1.0 - rng.Uniform());
    } while (b + b < a * a);
    *value = u < 0 ? -(kZigTail + a) : kZigTail + a;
    return true;
  }
  // Accept when a uniform height in the layer falls under the density.
  const double x = u * z.x[i];
  const double f_outer = std::exp(-0.5 * (z.x[i] * z.x[i] - x * x));
  const double f_inner = std::exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - x * x));
  *value = x;
  return f_outer + rng.Uniform() * (f_inner - f_outer) < 1.0;
}

// A standard normal draw; inlined into the loops that fill tensors.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline double ZigguratNormal(Rng& rng, const Ziggurat& z) {
  for (;;) {
    const uint64_t bits = rng.Next();
    const int i = static_cast<int>(bits & (kZigLayers - 1));
    const double u = static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;  // [-1, 1)
    if (std::fabs(u) < z.ratio[i]) return u * z.x[i];
    double x;
    if (ZigguratSlow(rng, z, i, u, &x)) return x;
  }
}

// A drawn double as each element type.
struct StoreF32 {
  void operator()(double v, void* out, size_t i) const {
    static_cast<float*>(out)[i] = static_cast<float>(v);
  }
};
struct StoreF64 {
  void operator()(double v, void* out, size_t i) const { static_cast<double*>(out)[i] = v; }
};
struct StoreF16 {
  void operator()(double v, void* out, size_t i) const {
    static_cast<uint16_t*>(out)[i] = FloatToHalf(static_cast<float>(v));
  }
};
struct StoreBf16 {
  void operator()(double v, void* out, size_t i) const {
    static_cast<uint16_t*>(out)[i] = FloatToBf16(static_cast<float>(v));
  }
};
template <typename T>
struct StoreInt {
  void operator()(double v, void* out, size_t i) const {
    static_cast<T*>(out)[i] = ClampRound<T>(v);
  }
};

// Elements [chunk * kDataChunk, min(count, (chunk + 1) * kDataChunk)) from
// the chunk's own stream.
template <typename Store>
void FillChunk(const Distribution& dist, uint64_t seed, size_t chunk, size_t count,
               void* out, Store store) {
  Rng rng(MixSeed(seed, chunk));
  const size_t begin = chunk * kDataChunk;
  const size_t end = std::min(count, begin + kDataChunk);
  if (dist.kind == Distribution::kNormal) {
    const Ziggurat& z = Zig();
    for (size_t i = begin; i < end; ++i) {
      store(dist.a + dist.b * ZigguratNormal(rng, z), out, i);
    }
  } else {
    for (size_t i = begin; i < end; ++i) {
      store(dist.a + (dist.b - dist.a) * rng.Uniform(), out, i);
    }
  }
}

template <typename Store>
void FillAll(const Distribution& dist, uint64_t seed, size_t count, void* out,
             Store store) {
  ForEachChunk((count + kDataChunk - 1) / kDataChunk,
               [&](size_t c) { FillChunk(dist, seed, c, count, out, store); });
}

}  // namespace

kseek_tensor ContiguousTensor(const char* name, void* data, int32_t dtype,
                              const std::vector<int64_t>& shape) {
  kseek_tensor x;
  std::memset(&x, 0, sizeof(x));
  x.name = name;
  x.data = data;
  x.dtype = dtype;
  x.ndim = static_cast<int32_t>(std::min<size_t>(shape.size(), KSEEK_MAX_DIMS));
  int64_t stride = 1;
  for (int d = x.ndim - 1; d >= 0; --d) {
    x.shape[d] = shape[d];
    x.strides[d] = stride;
    stride *= shape[d];
  }
  return x;
}

uint64_t MixSeed(uint64_t a, uint64_t b) {
  return SplitMix64(a ^ SplitMix64(b ^ 0x6a09e667f3bcc909ULL));
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    x = SplitMix64(x);
    s = x;
  }
}

uint64_t Rng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

double Rng::Normal() { return ZigguratNormal(*this, Zig()); }

uint64_t Rng::Below(uint64_t n) {
  // Rejection keeps the result unbiased.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         std::numeric_limits<uint64_t>::max() % n;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return x % n;
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // infinity or NaN (kept quiet)
    return sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u);
  }
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504
  if (a < 0x38800000u) {
    // Below 2^-14: a subnormal half, the value in units of 2^-24, rounded
    // to nearest even by nearbyint (exact scaling by a power of two).
    const float scaled = BitsFloat(a) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  a += 0xfffu + ((a >> 13) & 1u);  // round the 13 dropped bits to even
  a -= (127u - 15u) << 23;         // rebias the exponent
  return sign | static_cast<uint16_t>(a >> 13);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 0x1.0p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  return BitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t FloatToBf16(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float Bf16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

void FillRandom(kseek_dtype dtype, const Distribution& dist, uint64_t seed,
                size_t count, void* out) {
  switch (dtype) {
    case KSEEK_F32: FillAll(dist, seed, count, out, StoreF32{}); return;
    case KSEEK_F64: FillAll(dist, seed, count, out, StoreF64{}); return;
    case KSEEK_F16: FillAll(dist, seed, count, out, StoreF16{}); return;
    case KSEEK_BF16: FillAll(dist, seed, count, out, StoreBf16{}); return;
    case KSEEK_I32: FillAll(dist, seed, count, out, StoreInt<int32_t>{}); return;
    case KSEEK_I64: FillAll(dist, seed, count, out, StoreInt<int64_t>{}); return;
    case KSEEK_U8: FillAll(dist, seed, count, out, StoreInt<uint8_t>{}); return;
  }
}

Comparison CompareOutput(const std::string& name, kseek_dtype dtype,
                         const void* candidate, const void* reference,
                         size_t count, const Tolerance& tol) {
  switch (dtype) {
    case KSEEK_F32: return Compare(name, candidate, reference, count, tol, LoadF32{});
    case KSEEK_F64: return Compare(name, candidate, reference, count, tol, LoadF64{});
    case KSEEK_F16: return Compare(name, candidate, reference, count, tol, LoadF16{});
    case KSEEK_BF16: return Compare(name, candidate, reference, count, tol, LoadBf16{});
    case KSEEK_I32: return Compare(name, candidate, reference, count, tol, LoadI32{});
    case KSEEK_I64: return Compare(name, candidate, reference, count, tol, LoadI64{});
    case KSEEK_U8: return Compare(name, candidate, reference, count, tol, LoadU8{});
  }
  Comparison c;
  c.result.tensor = name;
  c.error = absl::StrCat("output ", name, ": unknown dtype ", static_cast<int>(dtype));
  return c;
}

}  // namespace kseek
