// Tensor data for kseek-runner: the random generator behind every input,
// conversions between doubles and the ABI's element types, and the
// comparison of an output against the reference.
//
// Inputs are a pure function of (seed, stream): the same job seed gives the
// same tensors whatever the thread count or the order of scenarios. Large
// tensors are generated and compared in chunks of kDataChunk elements on
// several threads; every chunk has its own generator stream and partial
// sums, combined in chunk order, so results never depend on the thread
// count. Everything here is thread-compatible.
#ifndef KERNELSEEK_HARNESS_RUNNER_DATA_H_
#define KERNELSEEK_HARNESS_RUNNER_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/src/compare_partial.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"
#include "kernelseek/abi.h"

namespace kseek {

// Elements per generator stream and per unit of work of FillRandom and
// CompareOutput: element i of a tensor drawn from seed s comes from stream
// MixSeed(s, i / kDataChunk).
inline constexpr size_t kDataChunk = size_t{1} << 20;

// splitmix64 of a ^ splitmix64(b): a seed for a sub-stream `b` of `a`.
uint64_t MixSeed(uint64_t a, uint64_t b);

// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t Next();
  double Uniform();             // [0, 1), 53 random bits
  double Normal();              // standard normal (ziggurat, 128 layers)
  uint64_t Below(uint64_t n);   // [0, n); n > 0

 private:
  uint64_t s_[4];
};

// The ABI's view of a row-major, contiguous tensor at `data` (at most
// KSEEK_MAX_DIMS dimensions are kept): what the judge gives the reference
// and a kernel host gives its kernel.
kseek_tensor ContiguousTensor(const char* name, void* data, int32_t dtype,
                              const std::vector<int64_t>& shape);

// IEEE binary16 and bfloat16 from float, rounding to nearest even, and back.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t b);

// Fills `count` elements of `dtype` at `out` from `dist`, drawn from the
// streams of `seed` (one per kDataChunk elements). Values are drawn in
// double, rounded to float for the 16-bit types, and rounded to the nearest
// integer (clamped) for integer types. Uses several threads for large
// tensors.
void FillRandom(kseek_dtype dtype, const Distribution& dist, uint64_t seed,
                size_t count, void* out);

// Compares `count` elements of a candidate output with the reference's.
// NaN in the candidate fails; an infinity passes only where the reference
// holds the same infinity; other elements give the relative L2 error
// (||c - r|| / ||r||, or ||c - r|| when ||r|| is 0) and the largest
// absolute error. `error` is empty when the output is within `tol`. Sums
// are taken per kDataChunk elements and added in chunk order.
struct Comparison {
  OutputError result;
  std::string error;
};
Comparison CompareOutput(const std::string& name, kseek_dtype dtype,
                         const void* candidate, const void* reference,
                         size_t count, const Tolerance& tol);

// CompareOutput's verdict from the partials (compare_partial.h) of ranges
// that together cover `count` elements, added in the order given.
Comparison FinishComparison(const std::string& name, size_t count, const Tolerance& tol,
                            const std::vector<ComparePartial>& parts);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_RUNNER_DATA_H_
