// Blackwell attention forward (flash_attention_fwd), version 1: a
// dependency-free FlashAttention-4 style kernel for sm_100a (tcgen05.mma
// with its accumulators in tensor memory, TMA, mbarriers, warp
// specialisation).
//
// NOT RUN ON BLACKWELL HARDWARE. No sm_100 device has been lent yet: this
// kernel compiles for sm_100a with the harness's flags, and its
// correctness rests on the CPU emulation of its PTX in tests/blackwell_emu
// (written from the PTX ISA's definitions, not from the hardware). Its
// speed is not measured; the first Blackwell worker measures it
// (scripts/device/full_run.sh phase blackwell). BLACKWELL_NOTES.md says
// what the emulation cannot establish.
//
// Work. One block per 128 query rows of one (batch, query head) (packed
// GQA decode: of the query heads that share a K/V head, below) and key
// split: the M of tcgen05.mma.cta_group::1 and the 128 lanes of tensor
// memory, row r of the tile in lane r. Grid (query tiles x splits,
// heads_q / pack, batch); with causal masking the last (heaviest) query tiles get
// the lowest block numbers, so they start first. The block walks the key
// tiles of its split that its last row sees; GQA/MQA through the K/V head
// index h / (heads_q / heads_kv).
//
//   head_dim | D   | keys/tile (BN) | K/V stages | shared memory | TMEM columns used
//   ---------+-----+----------------+------------+---------------+------------------
//   64       |  64 |      128       |     2      |  114 KB       | 320 of 512
//   72..128  | 128 |      128       |     2      |  194 KB       | 384 of 512
//   136..256 | 256 |       64       |     2      |  210 KB       | 384 of 512
//
//   head_dim runs on the next compiled D (64, 128, 256): TMA boxes past
//   head_dim are zero-filled, so those columns add nothing to S, and their
//   O columns are not stored. The scale is 1/sqrt(head_dim).
//
// Tensor memory (512 columns allocated by the MMA warp, fp32 cells):
//   columns [0, BN)        S buffer 0 = Q K^T of even key tiles
//   columns [BN, 2 BN)     S buffer 1 = Q K^T of odd key tiles
//   columns [2 BN, 2 BN+D) O, the unnormalised output accumulator
// S is double-buffered so that the tensor cores compute S of tile j + 1
// while the softmax reads S of tile j.
//
// Shared memory: Q (128 rows), a ring of K and V tiles (BN rows each) and
// P (128 rows x BN keys), every tile as 64-column blocks of rows x 128
// bytes, 128-byte swizzled (16-byte chunk c of row r at c ^ (r % 8)),
// 1024-byte aligned: the layout TMA writes and the tcgen05 shared-memory
// descriptors read (K-major Q, K and P; MN-major V).
//
// Warp roles (384 threads, three warpgroups; setmaxnreg moves registers
// from the load/MMA and correction warpgroups to the softmax):
//   warp 0, one thread      load: TMA of Q once, then K(j) and V(j) into
//                           the ring, each stage with its own full/empty
//                           mbarriers (empty ones arrived by
//                           tcgen05.commit when the MMAs reading it end)
//   warp 1, one thread      MMA: allocates tensor memory (the whole warp),
//                           issues S(j) = Q K(j)^T into S buffer j % 2 and
//                           then O += P(j - 1) V(j - 1) (K = 16 per
//                           instruction), committing each group to the
//                           mbarriers that release K/V stages and hand S
//                           or O on
//   warps 4..7 (128)        softmax and epilogue: thread r owns row r;
//                           tcgen05.ld of its S row, masking, online
//                           softmax in fp32 with ex2.approx, P rounded to
//                           16 bits into shared memory; its rescale factor
//                           to the correction warps; at the end O from
//                           tensor memory, normalised, stored with 16-byte
//                           stores, and LSE
//   warps 8..11 (128)       correction: rescales row r of O in tensor
//                           memory (tcgen05.ld / st) by the factor of the
//                           new row maximum once P(j - 1) V(j - 1) is done,
//                           before P(j) V(j) is issued; with
//                           KSEEK_BW_LAZY_RESCALE (FlashAttention-4's
//                           conditional rescaling) the maximum only moves
//                           when it grows by more than 2^8, and a warp
//                           whose 32 rows keep theirs skips the rescale
//   warps 2, 3              idle (they lower their registers with warp 0
//                           and 1: setmaxnreg is per warpgroup)
// Overlap: TMA of later tiles under everything; S(j + 1) on the tensor
// cores under the softmax of tile j; the correction of O for tile j under
// the softmax's exponentials of tile j; P(j) V(j) under the softmax of
// tile j + 1.
//
// Masking: keys at or past seqlen_k and, with causal masking, keys past a
// row's bottom-right diagonal (key > row + seqlen_k - seqlen_q) get -inf
// on the tiles that cross the row's limit. A row that sees no key keeps
// max = -inf and sum = 0 and is written as O = 0, LSE = -inf; a block
// whose rows see no key issues no MMA.
//
// Split keys (flash-decoding) for shapes whose blocks fill less than 80%
// of the SMs (decode, short prefill): the key tiles are split into up to
// 32 ranges of at least 2 tiles, about enough to fill the SMs; each block
// writes its normalised fp32 partial O and its LSE to scratch memory of
// the call's own (SplitScratch: at most 32 MB of O, fewer splits when the
// partials would not fit; calls on several streams at once and in CUDA
// graphs do not share it), and
// CombineSplits (one warp per row) merges them: lse = log sum exp(lse_s),
// O = sum exp(lse_s - lse) O_s. A split whose rows see no key writes
// lse_s = -inf.
//
// GQA decode (at most KSEEK_BW_PACK_GQA_MAX_Q = 16 queries, heads_q >
// heads_kv): the pack = heads_q / heads_kv query heads that share a K/V
// head fill one tile's rows, row r = query r / pack of head r % pack (the
// Q box is pack heads x 128 / pack queries, which TMA lays out in exactly
// that order), so each K/V head is read once per tile instead of once per
// query head; when pack does not divide 128 the last rows are masked and
// never stored. Decode without GQA, and other short shapes, still fill a
// 128-row tile with few live rows: the simple path for them, correct under
// emulation, its speed unknown (BLACKWELL_NOTES.md).
//
// On any device other than compute capability 10.x the launch returns an
// error; the sm_90a build holds no kernel body (the tcgen05 instructions do
// not exist there).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernelseek/abi.h"

// Switches (compile-time; defaults chosen without measurement, since no
// device is lent; tests/blackwell_emu runs the others):
//   KSEEK_BW_LAZY_RESCALE   1: rescale O only when a row maximum grows by
//                           more than 2^8 (FlashAttention-4); 0: always
//   KSEEK_BW_HD64_STAGES    K/V stages at head_dim 64 (2 or 3; ptxas spills
//                           4 bytes with 3)
//   KSEEK_BW_HD128_BLOCK_N  keys per tile at head_dim 72..128 (64 or 128)
//   KSEEK_BW_SPLIT_KEYS     1: shapes whose blocks fill less than 80% of
//                           the SMs split their key tiles (flash-decoding);
//                           0: one block per query tile always
//   KSEEK_BW_PACK_GQA_MAX_Q GQA shapes of at most this many queries pack the
//                           query heads that share a K/V head into a tile's
//                           rows; 0: never
#ifndef KSEEK_BW_LAZY_RESCALE
#define KSEEK_BW_LAZY_RESCALE 1
#endif
#ifndef KSEEK_BW_HD64_STAGES
#define KSEEK_BW_HD64_STAGES 2
#endif
#ifndef KSEEK_BW_HD128_BLOCK_N
#define KSEEK_BW_HD128_BLOCK_N 128
#endif
#ifndef KSEEK_BW_SPLIT_KEYS
#define KSEEK_BW_SPLIT_KEYS 1
#endif
#ifndef KSEEK_BW_PACK_GQA_MAX_Q
#define KSEEK_BW_PACK_GQA_MAX_Q 16
#endif

namespace {

// ---------------------------------------------------------------------------
// Configuration.

constexpr int kRows = 128;       // query rows per block: tcgen05.mma M, TMEM lanes
constexpr int kThreads = 384;    // three warpgroups
constexpr int kTmemColumns = 512;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kRescaleThreshold = 8.f;  // log2 units: P stays below 2^8
// Registers per thread after setmaxnreg, per warpgroup; the block has
// 168 x 384 from launch (__launch_bounds__(384, 1)).
constexpr int kLaunchRegisters = 168;
constexpr int kLoadRegisters = 56;
constexpr int kSoftmaxRegisters = 240;
constexpr int kCorrectionRegisters = 152;
static_assert(kLoadRegisters + kSoftmaxRegisters + kCorrectionRegisters <= 3 * kLaunchRegisters,
              "setmaxnreg counts exceed the block's registers");
// Split keys: at most kMaxSplits per query tile, each at least
// kMinTilesPerSplit key tiles, their fp32 partials within kScratchOFloats.
constexpr int kMaxSplits = 32;
constexpr int kMinTilesPerSplit = 2;
constexpr int kCombineWarps = 4;  // rows per block of CombineSplits
constexpr int64_t kScratchOFloats = int64_t(8) << 20;  // 32 MB
constexpr int64_t kScratchLseFloats = kScratchOFloats / 64;

template <typename T>
constexpr bool kIsHalf = std::is_same<T, __half>::value;

template <int D>
struct Config {
  static constexpr int kBlockN = D == 256 ? 64 : D == 128 ? KSEEK_BW_HD128_BLOCK_N : 128;
  static constexpr int kStages = D == 64 ? KSEEK_BW_HD64_STAGES : 2;
  static constexpr int kColBlocks = D / 64;     // 64-column (128-byte) blocks of a row
  static constexpr int kQBytes = kRows * D * 2;
  static constexpr int kTileBytes = kBlockN * D * 2;  // one K or V tile
  static constexpr int kPBytes = kRows * kBlockN * 2;
  // Shared memory, from a 1024-byte aligned base.
  static constexpr int kQOff = 0;
  static constexpr int kKOff = kQOff + kQBytes;
  static constexpr int kVOff = kKOff + kStages * kTileBytes;
  static constexpr int kPOff = kVOff + kStages * kTileBytes;
  static constexpr int kAlphaOff = kPOff + kPBytes;  // float per row
  static constexpr int kBarOff = kAlphaOff + kRows * 4;
  // mbarriers, 8 bytes each.
  static constexpr int kQFull = 0;
  static constexpr int kKFull = 1;
  static constexpr int kKEmpty = kKFull + kStages;
  static constexpr int kVFull = kKEmpty + kStages;
  static constexpr int kVEmpty = kVFull + kStages;
  static constexpr int kSFull = kVEmpty + kStages;  // two
  static constexpr int kPFull = kSFull + 2;
  static constexpr int kAlphaFull = kPFull + 1;
  static constexpr int kOReady = kAlphaFull + 1;
  static constexpr int kPVDone = kOReady + 1;
  static constexpr int kBars = kPVDone + 1;
  static constexpr int kTmemSlotOff = kBarOff + 8 * kBars;
  static constexpr int kSmemBytes = kTmemSlotOff + 16 + 1024;  // + alignment slack
  // Tensor memory columns.
  static constexpr int kSCol = 0;  // S buffer b at kSCol + b * kBlockN
  static constexpr int kOCol = 2 * kBlockN;
  static_assert(kOCol + D <= kTmemColumns, "tensor memory columns");
  static_assert(kBlockN % 32 == 0 && D % 32 == 0, "tcgen05.ld in 32-column pieces");
  static_assert(kBlockN >= 16 && kBlockN <= 256 && D <= 256, "tcgen05.mma N");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory");
  // One block per SM (each allocates all 512 tensor-memory columns; a
  // second would wait in tcgen05.alloc): two do not fit the SM's 228 KB
  // with the 1 KB the runtime reserves per block.
  static_assert(2 * (kSmemBytes + 1024) > 228 * 1024, "two blocks per SM");
};

// The last error of the calling thread (kseek_error_message).
thread_local const char* g_error = "";
thread_local char g_error_text[256];  // g_error when it names a runtime error

struct Problem {
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  int head_dim;  // elements per row in memory (<= the kernel's D)
  int q_tiles;
  // GQA packing: tile row r is query r / pack of query head
  // hkv * pack + r % pack; q_rows queries per tile (pack = 1: 128 of one
  // head).
  int pack, q_rows;
  int splits, tiles_per_split;  // key splits per query tile (1: none)
  float scale_log2;  // log2(e) / sqrt(head_dim)
  // With split keys, the call's partials (SplitScratch): normalised O
  // (fp32, head_dim columns per row) and LSE per split and (batch, head,
  // query) row.
  float* split_o;
  float* split_lse;
};

// ---------------------------------------------------------------------------
// PTX wrappers (tcgen05, TMA, mbarriers, fences).
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ float Exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
// Shared-memory matrix descriptor (PTX ISA 9.7.16.4.1) of a 128-byte
// swizzled operand: start address, leading and stride byte offsets, the
// fixed 0b001 at bits 46-48, swizzle mode 2 (128-byte) at bits 61-63.
__device__ __forceinline__ uint64_t SmemDescriptor(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
         (uint64_t((sbo & 0x3FFFF) >> 4) << 32) | (uint64_t(1) << 46) | (uint64_t(2) << 61);
}
// Instruction descriptor of tcgen05.mma .kind::f16 (PTX ISA 9.7.16.4.2):
// D f32, A and B f16 or bf16, A K-major, B K-major or (transpose_b)
// MN-major, N >> 3 at bits 17-22, M >> 4 at bits 24-28.
template <typename T>
__device__ __forceinline__ uint32_t InstrDescriptor(int m, int n, bool transpose_b) {
  const uint32_t ab = kIsHalf<T> ? 0 : 1;
  return (1u << 4) | (ab << 7) | (ab << 10) | (uint32_t(transpose_b) << 16) |
         (uint32_t(n >> 3) << 17) | (uint32_t(m >> 4) << 24);
}
// Warp-wide: allocates `cols` tensor-memory columns and writes their
// address to shared memory at `slot`.
__device__ __forceinline__ void TmemAlloc(uint32_t slot, uint32_t cols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot),
               "r"(cols)
               : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void TmemDealloc(uint32_t taddr, uint32_t cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(cols)
               : "memory");
}
// Orders tcgen05 operations around thread synchronisation (mbarrier
// waits and arrivals, bar.sync).
__device__ __forceinline__ void TmemFenceBefore() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
__device__ __forceinline__ void TmemFenceAfter() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}
// d (tensor memory) = A B (+ d when accumulate != 0), one M x N x 16 step.
__device__ __forceinline__ void Mma(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                    uint32_t idesc, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}
// The mbarrier at `bar` gets one arrival when every tcgen05.mma this
// thread issued before has completed.
__device__ __forceinline__ void MmaCommit(uint32_t bar) {
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
      : "memory");
}
#define KSEEK_BW_R32                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define KSEEK_BW_V32(v, M)                                                                    \
  M(v[0]), M(v[1]), M(v[2]), M(v[3]), M(v[4]), M(v[5]), M(v[6]), M(v[7]), M(v[8]), M(v[9]),  \
      M(v[10]), M(v[11]), M(v[12]), M(v[13]), M(v[14]), M(v[15]), M(v[16]), M(v[17]),         \
      M(v[18]), M(v[19]), M(v[20]), M(v[21]), M(v[22]), M(v[23]), M(v[24]), M(v[25]),         \
      M(v[26]), M(v[27]), M(v[28]), M(v[29]), M(v[30]), M(v[31])
#define KSEEK_BW_OUT(x) "=f"(x)
#define KSEEK_BW_IN(x) "f"(x)
// Warp-wide: this thread's lane of 32 consecutive columns from `taddr`
// (shape 32x32b: warp w reaches lanes 32 (w % 4) ... + 31). The values are
// in v only after TmemWaitLd.
__device__ __forceinline__ void TmemLoad32(uint32_t taddr, float* v) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 " KSEEK_BW_R32 ", [%32];\n"
               : KSEEK_BW_V32(v, KSEEK_BW_OUT)
               : "r"(taddr));
}
__device__ __forceinline__ void TmemStore32(uint32_t taddr, const float* v) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x32.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8, "
               "%9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, "
               "%25, %26, %27, %28, %29, %30, %31, %32};\n" ::"r"(taddr),
               KSEEK_BW_V32(v, KSEEK_BW_IN)
               : "memory");
}
#undef KSEEK_BW_IN
#undef KSEEK_BW_OUT
#undef KSEEK_BW_V32
#undef KSEEK_BW_R32
__device__ __forceinline__ void TmemWaitLd() {
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void TmemWaitSt() {
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void BarrierInit(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA, MMA).
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Generic-proxy writes to shared memory (P) made visible to tcgen05.mma.
__device__ __forceinline__ void FenceProxyAsync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void ArriveExpectBytes(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void Arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the barrier's phase with parity `parity` has completed.
__device__ __forceinline__ void Wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}
// One box of a 4-D tensor map (coordinates innermost first) into shared
// memory; completion is counted in bytes on `bar`.
__device__ __forceinline__ void TmaLoad4d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                          int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
      "bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
template <int kRegs>
__device__ __forceinline__ void RaiseRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void LowerRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
#endif  // __CUDA_ARCH_FEAT_SM100_ALL
// End of PTX wrappers.
// ---------------------------------------------------------------------------

// Two floats rounded to the 16-bit type, `lo` in the low half.
__device__ __forceinline__ uint32_t Pack2(float lo, float hi, __nv_bfloat16) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t Pack2(float lo, float hi, __half) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

#if defined(__CUDA_ARCH_FEAT_SM100_ALL)

// What one block works on: its query tile, head, batch and key tiles.
struct Tile {
  int q0;       // first query row
  int h, hkv, b;  // h: the first query head of the tile (all with pack = 1)
  int split;
  int first_tile;  // its first key tile
  int key_tiles;   // key tiles from there that its last row sees (0: none)
};

template <int D>
__device__ __forceinline__ Tile BlockTile(const Problem& p) {
  using C = Config<D>;
  Tile t;
  const int tile = int(blockIdx.x) / p.splits;
  t.split = int(blockIdx.x) % p.splits;
  const int qt = p.causal ? p.q_tiles - 1 - tile : tile;
  t.q0 = qt * p.q_rows;
  t.h = blockIdx.y * p.pack;
  t.hkv = t.h / (p.heads_q / p.heads_kv);
  t.b = blockIdx.z;
  const int last_row = min(t.q0 + p.q_rows - 1, p.seqlen_q - 1);
  const int last_key = p.causal ? min(p.seqlen_k - 1, last_row + p.seqlen_k - p.seqlen_q)
                                : p.seqlen_k - 1;
  const int visible = last_key < 0 ? 0 : last_key / C::kBlockN + 1;
  t.first_tile = t.split * p.tiles_per_split;
  t.key_tiles = max(0, min(visible, t.first_tile + p.tiles_per_split) - t.first_tile);
  return t;
}

// Shared-memory addresses of one block.
template <int D>
struct Smem {
  uint32_t base;
  __device__ uint32_t q() const { return base + Config<D>::kQOff; }
  __device__ uint32_t k(int s) const { return base + Config<D>::kKOff + s * Config<D>::kTileBytes; }
  __device__ uint32_t v(int s) const { return base + Config<D>::kVOff + s * Config<D>::kTileBytes; }
  __device__ uint32_t pt() const { return base + Config<D>::kPOff; }
  __device__ uint32_t bar(int i) const { return base + Config<D>::kBarOff + 8 * i; }
};

// Load role (one thread): Q once, then K(j) and V(j) of every key tile
// into stage j % kStages once the MMAs that read its previous tiles end.
template <int D>
__device__ void LoadRole(const Problem& p, const Tile& t, const Smem<D>& sm, const CUtensorMap* q_map,
                         const CUtensorMap* k_map, const CUtensorMap* v_map) {
  using C = Config<D>;
  if (t.key_tiles == 0) return;  // rows that see no key: no loads, no MMA
  // Boxes of pack heads x q_rows queries (row qi * pack + g): 128 rows or,
  // when pack does not divide 128, a few less (the softmax masks the rest).
  ArriveExpectBytes(sm.bar(C::kQFull), C::kColBlocks * p.pack * p.q_rows * 128);
  for (int cb = 0; cb < C::kColBlocks; ++cb)
    TmaLoad4d(sm.q() + cb * kRows * 128, q_map, sm.bar(C::kQFull), cb * 64, t.h, t.q0, t.b);
  for (int j = 0; j < t.key_tiles; ++j) {
    const int s = j % C::kStages;
    const uint32_t empty_parity = ((j / C::kStages) & 1) ^ 1;
    Wait(sm.bar(C::kKEmpty + s), empty_parity);
    ArriveExpectBytes(sm.bar(C::kKFull + s), C::kTileBytes);
    for (int cb = 0; cb < C::kColBlocks; ++cb)
      TmaLoad4d(sm.k(s) + cb * C::kBlockN * 128, k_map, sm.bar(C::kKFull + s), cb * 64, t.hkv,
                (t.first_tile + j) * C::kBlockN, t.b);
    Wait(sm.bar(C::kVEmpty + s), empty_parity);
    ArriveExpectBytes(sm.bar(C::kVFull + s), C::kTileBytes);
    for (int cb = 0; cb < C::kColBlocks; ++cb)
      TmaLoad4d(sm.v(s) + cb * C::kBlockN * 128, v_map, sm.bar(C::kVFull + s), cb * 64, t.hkv,
                (t.first_tile + j) * C::kBlockN, t.b);
  }
}

// O += P(i) V(i): A = P (128 x BN, K-major), B = V (BN x D, MN-major: D
// contiguous), K = 16 keys per instruction.
template <typename T, int D>
__device__ void IssuePV(const Smem<D>& sm, uint32_t tmem, int i) {
  using C = Config<D>;
  const int s = i % C::kStages;
  Wait(sm.bar(C::kVFull + s), (i / C::kStages) & 1);
  Wait(sm.bar(C::kPFull), i & 1);
  Wait(sm.bar(C::kOReady), i & 1);
  TmemFenceAfter();
  const uint32_t idesc = InstrDescriptor<T>(kRows, D, /*transpose_b=*/true);
  for (int k = 0; k < C::kBlockN / 16; ++k) {
    // P: 64-key blocks of 128 rows; 16 keys = 32 bytes within a row.
    const uint64_t a = SmemDescriptor(sm.pt() + (k / 4) * kRows * 128 + (k % 4) * 32, 16, 1024);
    // V: 16 keys = 16 rows of 128 bytes; LBO steps over 64-column blocks.
    const uint64_t b = SmemDescriptor(sm.v(s) + k * 16 * 128, C::kBlockN * 128, 1024);
    Mma(tmem + C::kOCol, a, b, idesc, i > 0 || k > 0);
  }
  MmaCommit(sm.bar(C::kVEmpty + s));
  MmaCommit(sm.bar(C::kPVDone));
}

// MMA role (one thread): S(j) into S buffer j % 2, then P(j - 1) V(j - 1).
template <typename T, int D>
__device__ void MmaRole(const Tile& t, const Smem<D>& sm, uint32_t tmem) {
  using C = Config<D>;
  if (t.key_tiles == 0) return;
  Wait(sm.bar(C::kQFull), 0);
  const uint32_t idesc = InstrDescriptor<T>(kRows, C::kBlockN, /*transpose_b=*/false);
  for (int j = 0; j < t.key_tiles; ++j) {
    const int s = j % C::kStages, buf = j & 1;
    // S buffer `buf` last held S(j - 2), which the softmax read before it
    // handed on P(j - 2), which P(j - 2) V(j - 2), issued in the last
    // round, waited for: the buffer needs no "empty" barrier of its own.
    Wait(sm.bar(C::kKFull + s), (j / C::kStages) & 1);
    TmemFenceAfter();
    for (int k = 0; k < D / 16; ++k) {
      // Q and K: 64-column blocks; 16 columns = 32 bytes within a row.
      const uint64_t a = SmemDescriptor(sm.q() + (k / 4) * kRows * 128 + (k % 4) * 32, 16, 1024);
      const uint64_t b =
          SmemDescriptor(sm.k(s) + (k / 4) * C::kBlockN * 128 + (k % 4) * 32, 16, 1024);
      Mma(tmem + C::kSCol + buf * C::kBlockN, a, b, idesc, k > 0);
    }
    MmaCommit(sm.bar(C::kKEmpty + s));
    MmaCommit(sm.bar(C::kSFull + buf));
    if (j > 0) IssuePV<T, D>(sm, tmem, j - 1);
  }
  IssuePV<T, D>(sm, tmem, t.key_tiles - 1);
}

// Softmax and epilogue role: thread r (0..127) owns row q0 + r, in tensor
// memory lane r.
template <typename T, int D>
__device__ void SoftmaxRole(const Problem& p, const Tile& t, const Smem<D>& sm,
                            unsigned char* smem, uint32_t tmem, T* o, float* lse) {
  using C = Config<D>;
  const int r = threadIdx.x - 128;
  const int row = t.q0 + r / p.pack;  // its query
  const int h = t.h + r % p.pack;     // its query head
  const bool live = r < p.pack * p.q_rows && row < p.seqlen_q;
  const uint32_t lane_addr = tmem + (uint32_t((r / 32) * 32) << 16);
  // The last key the row sees, counted from the block's first key tile
  // (rows past the tile's: none).
  const int limit = !live ? -1 - t.first_tile * C::kBlockN
                          : (p.causal ? min(p.seqlen_k - 1, row + p.seqlen_k - p.seqlen_q)
                                      : p.seqlen_k - 1) - t.first_tile * C::kBlockN;
  float* alpha_smem = reinterpret_cast<float*>(smem + C::kAlphaOff);
  float m = -INFINITY, l = 0.f;
  for (int j = 0; j < t.key_tiles; ++j) {
    const int buf = j & 1;
    Wait(sm.bar(C::kSFull + buf), (j >> 1) & 1);
    TmemFenceAfter();
    float s[C::kBlockN];
#pragma unroll
    for (int c = 0; c < C::kBlockN / 32; ++c)
      TmemLoad32(lane_addr + C::kSCol + buf * C::kBlockN + 32 * c, s + 32 * c);
    TmemWaitLd();
    const int key0 = j * C::kBlockN;
    if (key0 + C::kBlockN - 1 > limit) {
#pragma unroll
      for (int i = 0; i < C::kBlockN; ++i)
        if (key0 + i > limit) s[i] = -INFINITY;
    }
    float mx = m;
#pragma unroll
    for (int i = 0; i < C::kBlockN; ++i) mx = fmaxf(mx, s[i]);
#if KSEEK_BW_LAZY_RESCALE
    // Keep the old maximum while the new one exceeds it by at most 2^8.
    if (m != -INFINITY && (mx - m) * p.scale_log2 <= kRescaleThreshold) mx = m;
#endif
    const float alpha = m == -INFINITY ? 0.f : Exp2((m - mx) * p.scale_log2);
    const float base = mx == -INFINITY ? 0.f : mx * p.scale_log2;
    // P(j) goes where P(j - 1) was: wait until P(j - 1) V(j - 1) is done.
    if (j > 0) Wait(sm.bar(C::kPVDone), (j - 1) & 1);
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < C::kBlockN / 8; ++c) {
      uint32_t w[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p0 = Exp2(fmaf(s[8 * c + 2 * e], p.scale_log2, -base));
        const float p1 = Exp2(fmaf(s[8 * c + 2 * e + 1], p.scale_log2, -base));
        sum += p0 + p1;
        w[e] = Pack2(p0, p1, T());
      }
      // Row r of P: 64-key block c / 8, 16-byte chunk (c % 8) ^ (r % 8).
      const int offset = C::kPOff + (c / 8) * kRows * 128 + r * 128 + (((c % 8) ^ (r % 8)) << 4);
      *reinterpret_cast<uint4*>(smem + offset) = make_uint4(w[0], w[1], w[2], w[3]);
    }
    l = l * alpha + sum;
    m = mx;
    FenceProxyAsync();
    TmemFenceBefore();  // the loads of S(j) before the MMA may reuse its buffer
    alpha_smem[r] = alpha;
    Arrive(sm.bar(C::kAlphaFull));
    Arrive(sm.bar(C::kPFull));
  }
  // Epilogue: O / l from tensor memory, LSE.
  if (t.key_tiles > 0) {
    Wait(sm.bar(C::kPVDone), (t.key_tiles - 1) & 1);
    TmemFenceAfter();
  }
  const float inv = l > 0.f ? 1.f / l : 0.f;
  // Row (batch, head, query) of LSE; with split keys, of the partials.
  const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t row_id = (int64_t(t.b) * p.heads_q + h) * p.seqlen_q + row;
  T* orow = o + ((int64_t(t.b) * p.seqlen_q + row) * p.heads_q + h) * p.head_dim;
  float* prow = p.split_o + (t.split * rows_total + row_id) * p.head_dim;
#pragma unroll 1
  for (int c = 0; c < D / 32; ++c) {
    float v[32];
    if (t.key_tiles > 0) {
      TmemLoad32(lane_addr + C::kOCol + 32 * c, v);
      TmemWaitLd();
    } else {
#pragma unroll
      for (int i = 0; i < 32; ++i) v[i] = 0.f;
    }
    if (live) {
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        const int col = 32 * c + 8 * g;
        if (col < p.head_dim && p.splits == 1) {
          uint4 w = make_uint4(Pack2(v[8 * g] * inv, v[8 * g + 1] * inv, T()),
                               Pack2(v[8 * g + 2] * inv, v[8 * g + 3] * inv, T()),
                               Pack2(v[8 * g + 4] * inv, v[8 * g + 5] * inv, T()),
                               Pack2(v[8 * g + 6] * inv, v[8 * g + 7] * inv, T()));
          *reinterpret_cast<uint4*>(orow + col) = w;
        } else if (col < p.head_dim) {
          *reinterpret_cast<float4*>(prow + col) = make_float4(
              v[8 * g] * inv, v[8 * g + 1] * inv, v[8 * g + 2] * inv, v[8 * g + 3] * inv);
          *reinterpret_cast<float4*>(prow + col + 4) = make_float4(
              v[8 * g + 4] * inv, v[8 * g + 5] * inv, v[8 * g + 6] * inv, v[8 * g + 7] * inv);
        }
      }
    }
  }
  if (live) {
    const float row_lse = l > 0.f ? (m * p.scale_log2 + log2f(l)) * kLn2 : -INFINITY;
    if (p.splits == 1) lse[row_id] = row_lse;
    else p.split_lse[t.split * rows_total + row_id] = row_lse;
  }
}

// Correction role: thread r (0..127) rescales row r of O by the softmax's
// factor for tile j once P(j - 1) V(j - 1) has completed.
template <int D>
__device__ void CorrectionRole(const Tile& t, const Smem<D>& sm, unsigned char* smem,
                               uint32_t tmem) {
  using C = Config<D>;
  const int r = threadIdx.x - 256;
  const uint32_t lane_addr = tmem + (uint32_t((r / 32) * 32) << 16);
  const float* alpha_smem = reinterpret_cast<const float*>(smem + C::kAlphaOff);
  for (int j = 0; j < t.key_tiles; ++j) {
    Wait(sm.bar(C::kAlphaFull), j & 1);
    const float alpha = alpha_smem[r];
    if (j > 0) {
      Wait(sm.bar(C::kPVDone), (j - 1) & 1);
      TmemFenceAfter();
#if KSEEK_BW_LAZY_RESCALE
      const bool rescale = __any_sync(0xffffffffu, alpha != 1.f);
#else
      const bool rescale = true;
#endif
      if (rescale) {
#pragma unroll 1
        for (int c = 0; c < D / 32; ++c) {
          float v[32];
          TmemLoad32(lane_addr + C::kOCol + 32 * c, v);
          TmemWaitLd();
#pragma unroll
          for (int i = 0; i < 32; ++i) v[i] *= alpha;
          TmemStore32(lane_addr + C::kOCol + 32 * c, v);
        }
        TmemWaitSt();
      }
    }
    TmemFenceBefore();
    Arrive(sm.bar(C::kOReady));
  }
}

#endif  // __CUDA_ARCH_FEAT_SM100_ALL

template <typename T, int D>
__global__ void __launch_bounds__(kThreads, 1)
    AttentionBlackwell(const __grid_constant__ Problem p, const __grid_constant__ CUtensorMap q_map,
                       const __grid_constant__ CUtensorMap k_map,
                       const __grid_constant__ CUtensorMap v_map, T* o, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
  using C = Config<D>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // Swizzled tiles need a 1024-byte aligned base.
  const uint32_t raw = SharedAddress(smem_raw);
  unsigned char* smem = smem_raw + (((raw + 1023) & ~1023u) - raw);
  const Smem<D> sm{SharedAddress(smem)};
  const Tile t = BlockTile<D>(p);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    BarrierInit(sm.bar(C::kQFull), 1);
    for (int s = 0; s < C::kStages; ++s) {
      BarrierInit(sm.bar(C::kKFull + s), 1);
      BarrierInit(sm.bar(C::kKEmpty + s), 1);
      BarrierInit(sm.bar(C::kVFull + s), 1);
      BarrierInit(sm.bar(C::kVEmpty + s), 1);
    }
    for (int b = 0; b < 2; ++b) BarrierInit(sm.bar(C::kSFull + b), 1);
    BarrierInit(sm.bar(C::kPFull), kRows);
    BarrierInit(sm.bar(C::kAlphaFull), kRows);
    BarrierInit(sm.bar(C::kOReady), kRows);
    BarrierInit(sm.bar(C::kPVDone), 1);
    FenceBarrierInit();
  }
  if (warp == 1) TmemAlloc(sm.base + C::kTmemSlotOff, kTmemColumns);
  TmemFenceBefore();
  __syncthreads();
  TmemFenceAfter();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem + C::kTmemSlotOff);
  if (warp < 4) {
    LowerRegisters<kLoadRegisters>();
    if (warp == 0) {
      if (lane == 0) LoadRole<D>(p, t, sm, &q_map, &k_map, &v_map);
      __syncwarp();
    } else if (warp == 1) {
      if (lane == 0) MmaRole<T, D>(t, sm, tmem);
      __syncwarp();
    }
  } else if (warp < 8) {
    RaiseRegisters<kSoftmaxRegisters>();
    SoftmaxRole<T, D>(p, t, sm, smem, tmem, o, lse);
  } else {
    LowerRegisters<kCorrectionRegisters>();
    CorrectionRole<D>(t, sm, smem, tmem);
  }
  TmemFenceBefore();
  __syncthreads();
  TmemFenceAfter();
  if (warp == 1) TmemDealloc(tmem, kTmemColumns);
#endif  // __CUDA_ARCH_FEAT_SM100_ALL
}

// Split keys: one warp per (batch, head, query) row combines the splits'
// partials, lse = log sum_s exp(lse_s) and O = sum_s exp(lse_s - lse) O_s
// (lane s holds split s's weight; splits whose rows saw no key have
// lse_s = -inf and weigh nothing).
template <typename T>
__global__ void __launch_bounds__(32 * kCombineWarps)
    CombineSplits(const __grid_constant__ Problem p, T* o, float* lse) {
  const int lane = threadIdx.x % 32;
  const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t row_id = int64_t(blockIdx.x) * kCombineWarps + threadIdx.x / 32;
  if (row_id >= rows_total) return;
  const float ls = lane < p.splits ? p.split_lse[lane * rows_total + row_id] : -INFINITY;
  float mx = ls;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
  const float w = ls == -INFINITY ? 0.f : expf(ls - mx);
  float sum = w;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  const float mine = sum > 0.f ? w / sum : 0.f;
  float weight[kMaxSplits];
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s) weight[s] = __shfl_sync(0xffffffffu, mine, s);
  const int64_t bh = row_id / p.seqlen_q, row = row_id % p.seqlen_q;
  T* orow = o + ((bh / p.heads_q * p.seqlen_q + row) * p.heads_q + bh % p.heads_q) * p.head_dim;
  for (int col = 2 * lane; col < p.head_dim; col += 64) {
    float a0 = 0.f, a1 = 0.f;
#pragma unroll
    for (int s = 0; s < kMaxSplits; ++s) {
      if (s < p.splits && weight[s] > 0.f) {
        const float2 x =
            *reinterpret_cast<const float2*>(p.split_o + (s * rows_total + row_id) * p.head_dim + col);
        a0 += weight[s] * x.x;
        a1 += weight[s] * x.y;
      }
    }
    *reinterpret_cast<uint32_t*>(orow + col) = Pack2(a0, a1, T());
  }
  if (lane == 0) lse[row_id] = sum > 0.f ? mx + logf(sum) : -INFINITY;
}

// ---------------------------------------------------------------------------
// Host side.

// cuTensorMapEncodeTiled, a driver entry point reached through the runtime
// (no link against the driver library); null when the driver lacks it.
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFn TensorMapEncoder() {
  static const EncodeTiledFn encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return EncodeTiledFn(nullptr);
    return reinterpret_cast<EncodeTiledFn>(fn);
  }();
  return encoder;
}

// A BSHD tensor [batch, rows, heads, head_dim] as a 4-D tensor map,
// innermost dimension first (head_dim, heads, rows, batch), read in boxes
// of 64 columns x `box_heads` heads x `box_rows` rows of one batch,
// 128-byte swizzled (row r * box_heads + g of the box: row r of head g).
// Boxes past `rows` or head_dim are zero-filled.
template <typename T>
bool EncodeBshd(EncodeTiledFn encode, CUtensorMap* map, const void* data, int batch, int rows,
                int heads, int head_dim, int box_rows, int box_heads = 1) {
  const cuuint64_t hd = cuuint64_t(head_dim);
  const cuuint64_t dims[4] = {hd, cuuint64_t(heads), cuuint64_t(rows), cuuint64_t(batch)};
  const cuuint64_t strides[3] = {hd * sizeof(T), cuuint64_t(heads) * hd * sizeof(T),
                                 cuuint64_t(rows) * heads * hd * sizeof(T)};
  const cuuint32_t box[4] = {64, cuuint32_t(box_heads), cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  return encode(map, kIsHalf<T> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                4, const_cast<void*>(data), dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Key splits per query tile: 1 when the blocks fill 80% of the SMs (one
// block per SM: the shared memory allows no second); else about enough
// to fill them, each split at least kMinTilesPerSplit key tiles, the
// partials within 32 MB of O (kScratchOFloats).
template <int D>
void PlanSplits(Problem* p, int sms) {
  const int key_tiles = (p->seqlen_k + Config<D>::kBlockN - 1) / Config<D>::kBlockN;
  const int64_t blocks = int64_t(p->q_tiles) * (p->heads_q / p->pack) * p->batch;
  const int64_t rows_total = int64_t(p->batch) * p->heads_q * p->seqlen_q;
  int64_t splits = 1;
  if (KSEEK_BW_SPLIT_KEYS && blocks * 5 < int64_t(sms) * 4) {
    splits = (sms + blocks - 1) / blocks;
    splits = splits < kMaxSplits ? splits : kMaxSplits;
    if (splits > key_tiles / kMinTilesPerSplit) splits = key_tiles / kMinTilesPerSplit;
    while (splits > 1 && (splits * rows_total * p->head_dim > kScratchOFloats ||
                          splits * rows_total > kScratchLseFloats))
      --splits;
    if (splits < 1) splits = 1;
  }
  p->tiles_per_split = int((key_tiles + splits - 1) / splits);
  p->splits = (key_tiles + p->tiles_per_split - 1) / p->tiles_per_split;
}

// The split partials of one call (Problem::split_o, split_lse), so that
// calls on several streams at once, and graphs, never share them:
//   - A call that is not captured takes its stream's own buffer (calls on
//     one stream run one after another; the stream found by
//     cudaStreamGetId, whose ids are never reused): cudaMalloc, grown to a
//     power of two (1 MB at least) when a call needs more, held locked
//     from Bind until the call's kernels are launched so that two host
//     threads on one stream cannot interleave over it; past 16 streams
//     with a buffer, the least recently used one not being bound is freed
//     once the device is idle (cudaDeviceSynchronize; a stream's own buffer
//     is grown after cudaStreamSynchronize).
//   - A captured call allocates its partials in the capture (a graph
//     allocation node) from a memory pool the kernel keeps per device
//     (release threshold at its maximum), freed in stream order after the
//     combine.
// Calls that are not captured make no pool calls (hopper.cu's v4a pool
// could not allocate under the harness's sandbox). The runtime calls that
// a capture in another thread would forbid run with this thread's capture
// mode relaxed.
class SplitScratch {
 public:
  explicit SplitScratch(cudaStream_t stream) : stream_(stream) {}
  ~SplitScratch() {
    if (pooled_ != nullptr) cudaFreeAsync(pooled_, stream_);
  }
  SplitScratch(const SplitScratch&) = delete;
  SplitScratch& operator=(const SplitScratch&) = delete;

  // Sets p's partials when p splits keys; false with g_error set on
  // failure.
  bool Bind(Problem* p) {
    if (p->splits <= 1) return true;
    const int64_t rows = int64_t(p->splits) * p->batch * p->heads_q * p->seqlen_q;
    const size_t bytes = size_t(rows * (p->head_dim + 1)) * sizeof(float);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaStreamIsCapturing(stream_, &capture);
    if (err != cudaSuccess) return Fail("cannot tell whether the stream is being captured", err);
    int device = 0;
    err = cudaGetDevice(&device);
    if (err != cudaSuccess) return Fail("no current CUDA device", err);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    void* split = nullptr;
    bool bound;
    {
      std::lock_guard<std::mutex> lock(Mutex());
      bound = capture == cudaStreamCaptureStatusNone ? StreamBuffer(device, bytes, &split)
                                                     : Pooled(device, bytes, &split);
    }
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (!bound) return false;
    p->split_o = static_cast<float*>(split);
    p->split_lse = p->split_o + rows * p->head_dim;
    return true;
  }

 private:
  struct Buffer {
    int device = 0;
    unsigned long long stream_id = 0;
    std::mutex busy;  // held by the call that bound it, until its launches are done
    void* memory = nullptr;
    size_t bytes = 0;
    uint64_t last_use = 0;
  };
  static constexpr int kMaxBuffers = 16;
  // Never freed: kernels may still run when the library is unloaded.
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::vector<Buffer*>& Buffers() {
    static std::vector<Buffer*> buffers;
    return buffers;
  }

  bool Fail(const char* what, cudaError_t err) {
    (void)cudaGetLastError();
    snprintf(g_error_text, sizeof(g_error_text), "%s (%s)", what, cudaGetErrorString(err));
    g_error = g_error_text;
    return false;
  }

  // Sets *memory to the stream's buffer of at least `bytes`, locked for
  // this call (the caller holds Mutex()); false with g_error set. A stream
  // without one gets one: past kMaxBuffers on this device, the least
  // recently used one of this device's that no call holds is freed first,
  // once the device is idle (its stream's calls may still read it; when it
  // cannot be waited for, as while another thread captures a graph, none
  // is freed this time). A buffer too small is replaced once the stream's
  // earlier calls are done.
  bool StreamBuffer(int device, size_t bytes, void** memory) {
    static uint64_t uses = 0;
    unsigned long long id = 0;
    cudaError_t err = cudaStreamGetId(stream_, &id);
    if (err != cudaSuccess) return Fail("cannot read the stream's id", err);
    std::vector<Buffer*>& buffers = Buffers();
    Buffer* b = nullptr;
    int on_device = 0;
    for (Buffer* x : buffers) {
      on_device += x->device == device;
      if (x->device == device && x->stream_id == id) b = x;
    }
    if (b == nullptr) {
      if (on_device >= kMaxBuffers) {
        if (cudaDeviceSynchronize() == cudaSuccess)
          EvictOldest(device);
        else
          (void)cudaGetLastError();
      }
      b = new Buffer;
      b->device = device;
      b->stream_id = id;
      buffers.push_back(b);
    }
    busy_ = std::unique_lock<std::mutex>(b->busy);
    b->last_use = ++uses;
    if (b->bytes < bytes) {
      size_t grown = size_t(1) << 20;
      while (grown < bytes) grown *= 2;
      if (b->memory != nullptr) {
        err = cudaStreamSynchronize(stream_);
        if (err != cudaSuccess)
          return Fail("cannot wait for the stream's earlier calls to grow its buffer", err);
        cudaFree(b->memory);
        b->memory = nullptr;
        b->bytes = 0;
      }
      void* fresh = nullptr;
      err = cudaMalloc(&fresh, grown);
      if (err != cudaSuccess)
        return Fail("cannot allocate device memory for the split-key partials", err);
      b->memory = fresh;
      b->bytes = grown;
    }
    *memory = b->memory;
    return true;
  }

  // Frees the least recently used buffer of `device` that no call holds
  // (the caller holds Mutex() and has waited for the device).
  static void EvictOldest(int device) {
    std::vector<Buffer*>& buffers = Buffers();
    int oldest = -1;
    for (int i = 0; i < int(buffers.size()); ++i)
      if (buffers[i]->device == device &&
          (oldest < 0 || buffers[i]->last_use < buffers[oldest]->last_use)) {
        if (!buffers[i]->busy.try_lock()) continue;
        if (oldest >= 0) buffers[oldest]->busy.unlock();
        oldest = i;
      }
    if (oldest < 0) return;
    Buffer* evicted = buffers[oldest];
    if (evicted->memory != nullptr) cudaFree(evicted->memory);
    evicted->busy.unlock();
    delete evicted;
    buffers.erase(buffers.begin() + oldest);
  }

  // Sets *memory to `bytes` from the device's pool on the capturing stream
  // (the caller holds Mutex()); false with g_error set.
  bool Pooled(int device, size_t bytes, void** memory) {
    static std::vector<std::pair<int, cudaMemPool_t>> pools;  // never destroyed
    cudaMemPool_t pool = nullptr;
    for (const auto& d : pools)
      if (d.first == device) pool = d.second;
    cudaError_t err;
    if (pool == nullptr) {
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      err = cudaMemPoolCreate(&pool, &props);
      if (err != cudaSuccess)
        return Fail("cannot create a device memory pool for a captured call's partials", err);
      uint64_t keep = UINT64_MAX;
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
      pools.emplace_back(device, pool);
    }
    err = cudaMallocFromPoolAsync(&pooled_, bytes, pool, stream_);
    if (err != cudaSuccess) {
      pooled_ = nullptr;
      return Fail("cannot allocate the split-key partials in the graph", err);
    }
    *memory = pooled_;
    return true;
  }

  cudaStream_t stream_;
  void* pooled_ = nullptr;
  std::unique_lock<std::mutex> busy_;  // the stream's buffer, held until the destructor
};

template <typename T, int D>
int Launch(Problem p, const kseek_launch_args* args) {
  using C = Config<D>;
  int device = 0, major = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    g_error = "cannot query the device's compute capability and SM count";
    return 1;
  }
  if (major != 10) {
    g_error = "blackwell.cu needs a compute capability 10.x device (build for sm_100a)";
    return 1;
  }
  auto kernel = AttentionBlackwell<T, D>;
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
  if (attribute != cudaSuccess) {
    g_error = "the attention kernel's shared memory does not fit";
    return 1;
  }
  const EncodeTiledFn encode = TensorMapEncoder();
  if (encode == nullptr) {
    g_error = "the driver has no cuTensorMapEncodeTiled";
    return 1;
  }
  // GQA decode: the pack query heads of a K/V head share the tile's rows
  // (K/V read once per K/V head, not per query head).
  const int group = p.heads_q / p.heads_kv;
  p.pack = group > 1 && group <= kRows && p.seqlen_q <= KSEEK_BW_PACK_GQA_MAX_Q ? group : 1;
  p.q_rows = kRows / p.pack;
  CUtensorMap q_map, k_map, v_map;
  if (!EncodeBshd<T>(encode, &q_map, args->tensors[0].data, p.batch, p.seqlen_q, p.heads_q,
                     p.head_dim, p.q_rows, p.pack) ||
      !EncodeBshd<T>(encode, &k_map, args->tensors[1].data, p.batch, p.seqlen_k, p.heads_kv,
                     p.head_dim, C::kBlockN) ||
      !EncodeBshd<T>(encode, &v_map, args->tensors[2].data, p.batch, p.seqlen_k, p.heads_kv,
                     p.head_dim, C::kBlockN)) {
    g_error = "cuTensorMapEncodeTiled rejected a tensor map of q, k or v";
    return 1;
  }
  p.q_tiles = (p.seqlen_q + p.q_rows - 1) / p.q_rows;
  if (p.heads_q > 65535 || p.batch > 65535) {
    g_error = "heads_q and batch must be at most 65535";
    return 1;
  }
  PlanSplits<D>(&p, sms);
  cudaStream_t stream = static_cast<cudaStream_t>(args->stream);
  SplitScratch scratch(stream);
  if (!scratch.Bind(&p)) return 1;
  T* o = static_cast<T*>(args->tensors[3].data);
  float* lse = static_cast<float*>(args->tensors[4].data);
  kernel<<<dim3(unsigned(p.q_tiles * p.splits), unsigned(p.heads_q / p.pack), unsigned(p.batch)), kThreads,
           C::kSmemBytes, stream>>>(p, q_map, k_map, v_map, o, lse);
  if (p.splits > 1) {
    const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
    CombineSplits<T><<<unsigned((rows_total + kCombineWarps - 1) / kCombineWarps), 32 * kCombineWarps,
                       0, stream>>>(p, o, lse);
  }
  if (cudaGetLastError() != cudaSuccess) {
    g_error = "attention kernel launch failed";
    return 1;
  }
  return 0;
}

template <typename T>
int LaunchForDim(int head_dim, const Problem& p, const kseek_launch_args* args) {
  // Compiled for D = 64, 128 and 256: a head_dim runs on the next D up.
  if (head_dim >= 64 && head_dim <= 256 && head_dim % 8 == 0) {
    if (head_dim <= 64) return Launch<T, 64>(p, args);
    if (head_dim <= 128) return Launch<T, 128>(p, args);
    return Launch<T, 256>(p, args);
  }
  g_error = "head_dim must be a multiple of 8 from 64 to 256";
  return 1;
}

}  // namespace

extern "C" KSEEK_EXPORT const char* kseek_error_message(void) { return g_error; }

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->abi_version != KSEEK_ABI_VERSION || args->num_tensors != 5) {
    g_error = "expected ABI version 1 and tensors q, k, v, o, lse";
    return 1;
  }
  for (int i = 0; i < 4; ++i) {
    if (reinterpret_cast<uintptr_t>(args->tensors[i].data) % 16 != 0) {
      g_error = "q, k, v and o must be 16-byte aligned";
      return 1;
    }
  }
  Problem p = {};
  p.batch = int(kseek_param_get(args, "batch", 0));
  p.seqlen_q = int(kseek_param_get(args, "seqlen_q", 0));
  p.seqlen_k = int(kseek_param_get(args, "seqlen_k", 0));
  p.heads_q = int(kseek_param_get(args, "heads_q", 0));
  p.heads_kv = int(kseek_param_get(args, "heads_kv", 0));
  p.causal = int(kseek_param_get(args, "causal", 0));
  const int head_dim = int(kseek_param_get(args, "head_dim", 0));
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (p.batch < 1 || p.seqlen_q < 1 || p.seqlen_k < 1 || p.heads_kv < 1 || p.heads_q < 1 ||
      p.heads_q % p.heads_kv != 0) {
    g_error = "bad shape: need positive sizes and heads_kv dividing heads_q";
    return 1;
  }
  p.head_dim = head_dim;
  p.scale_log2 = kLog2e / sqrtf(float(head_dim));
  if (dtype == KSEEK_BF16) return LaunchForDim<__nv_bfloat16>(head_dim, p, args);
  if (dtype == KSEEK_F16) return LaunchForDim<__half>(head_dim, p, args);
  g_error = "dtype must be bf16 or f16";
  return 1;
}
