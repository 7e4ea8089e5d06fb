// Random inputs, element conversions and output comparison for
// kseek-runner (runner_data.h).
#include "runner_data.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

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

// Elements drawn per generator stream; streams are independent of threads.
constexpr size_t kChunk = size_t{1} << 20;

template <typename T>
T ClampRound(double v) {
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  double r = std::nearbyint(v);
  if (r <= lo) return std::numeric_limits<T>::lowest();
  if (r >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

void StoreElement(kseek_dtype dtype, double v, void* out, size_t i) {
  switch (dtype) {
    case KSEEK_F32: static_cast<float*>(out)[i] = static_cast<float>(v); break;
    case KSEEK_F64: static_cast<double*>(out)[i] = v; break;
    case KSEEK_F16:
      static_cast<uint16_t*>(out)[i] = FloatToHalf(static_cast<float>(v));
      break;
    case KSEEK_BF16:
      static_cast<uint16_t*>(out)[i] = FloatToBf16(static_cast<float>(v));
      break;
    case KSEEK_I32: static_cast<int32_t*>(out)[i] = ClampRound<int32_t>(v); break;
    case KSEEK_I64: static_cast<int64_t*>(out)[i] = ClampRound<int64_t>(v); break;
    case KSEEK_U8: static_cast<uint8_t*>(out)[i] = ClampRound<uint8_t>(v); break;
  }
}

void FillChunk(kseek_dtype dtype, const Distribution& dist, uint64_t seed,
               size_t chunk, size_t count, void* out) {
  Rng rng(MixSeed(seed, chunk));
  const size_t begin = chunk * kChunk;
  const size_t end = std::min(count, begin + kChunk);
  for (size_t i = begin; i < end; ++i) {
    double v = dist.kind == Distribution::kNormal
                   ? dist.a + dist.b * rng.Normal()
                   : dist.a + (dist.b - dist.a) * rng.Uniform();
    StoreElement(dtype, v, out, i);
  }
}

// The element types as doubles.
struct LoadF32 {
  double operator()(const void* p, size_t i) const { return static_cast<const float*>(p)[i]; }
};
struct LoadF64 {
  double operator()(const void* p, size_t i) const { return static_cast<const double*>(p)[i]; }
};
struct LoadF16 {
  double operator()(const void* p, size_t i) const {
    return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
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
Comparison Compare(const std::string& name, const void* cand, const void* ref,
                   size_t count, const Tolerance& tol, Load load) {
  Comparison c;
  c.result.tensor = name;
  double diff2 = 0, ref2 = 0, max_abs = 0;
  size_t nan_count = 0, first_nan = 0;
  size_t ref_nan_count = 0, first_ref_nan = 0;
  size_t inf_count = 0, first_inf = 0;
  double inf_cand = 0, inf_ref = 0;
  for (size_t i = 0; i < count; ++i) {
    const double x = load(cand, i);
    const double r = load(ref, i);
    if (std::isnan(x)) {
      if (nan_count++ == 0) first_nan = i;
      continue;
    }
    if (std::isnan(r)) {
      if (ref_nan_count++ == 0) first_ref_nan = i;
      continue;
    }
    if (std::isinf(x) || std::isinf(r)) {
      if (x == r) continue;  // the same infinity
      if (inf_count++ == 0) {
        first_inf = i;
        inf_cand = x;
        inf_ref = r;
      }
      continue;
    }
    const double d = x - r;
    diff2 += d * d;
    ref2 += r * r;
    max_abs = std::max(max_abs, std::fabs(d));
  }
  double rel = ref2 > 0 ? std::sqrt(diff2) / std::sqrt(ref2) : std::sqrt(diff2);
  if (!std::isfinite(rel)) rel = DBL_MAX;
  if (!std::isfinite(max_abs)) max_abs = DBL_MAX;
  c.result.rel_l2 = rel;
  c.result.max_abs = max_abs;

  std::vector<std::string> problems;
  if (nan_count > 0) {
    problems.push_back(absl::StrCat("NaN at element ", first_nan, " (", nan_count,
                                    " of ", count, " elements are NaN)"));
  }
  if (inf_count > 0) {
    problems.push_back(absl::StrCat("element ", first_inf, " is ", Num(inf_cand),
                                    " where the reference has ", Num(inf_ref), " (",
                                    inf_count, " such elements)"));
  }
  if (ref_nan_count > 0) {
    problems.push_back(absl::StrCat("the reference has NaN at element ",
                                    first_ref_nan, " (", ref_nan_count,
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

}  // namespace

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

double Rng::Normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - Uniform();  // (0, 1]: the logarithm stays finite
  const double u2 = Uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  have_spare_ = true;
  return r * std::cos(theta);
}

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
  const size_t chunks = (count + kChunk - 1) / kChunk;
  const size_t threads =
      std::min<size_t>({chunks, std::max(1u, std::thread::hardware_concurrency()), 16});
  if (threads <= 1) {
    for (size_t c = 0; c < chunks; ++c) FillChunk(dtype, dist, seed, c, count, out);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t c; (c = next.fetch_add(1)) < chunks;) {
        FillChunk(dtype, dist, seed, c, count, out);
      }
    });
  }
  for (std::thread& t : pool) t.join();
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
