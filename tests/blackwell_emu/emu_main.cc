// The emulated machine behind blackwell.cu's PTX (bw_emu.h) and the test
// driver: every shape below against an fp64 reference, each run with
// asynchronous work (TMA, tcgen05.mma, tcgen05.ld / st) completing at issue
// ("eager") and only when it must ("lazy": at the mbarrier wait that needs
// it, at tcgen05.wait), so that a read before its wait shows.
//
// The instructions follow the PTX ISA's definitions (section 9.7.16,
// "TensorCore 5th Generation Family Instructions", and the mbarrier,
// cp.async.bulk.tensor and setmaxnreg instructions), as cited at each one.
// Where the ISA leaves a layout to a figure, the convention assumed is the
// one tests/hopper_emu takes for WGMMA and hopper_wgmma_probe.cu confirmed
// on an H200: 128-byte swizzle as address bits [4, 7) XOR bits [7, 10),
// K-major rows of 128 bytes with SBO between groups of 8 rows, MN-major
// with LBO between 64-element blocks. Nothing here has been compared with
// a Blackwell device.
#include "bw_emu.h"
#include "blackwell_emu.inc"  // made by transform.py from blackwell.cu

namespace emu {
int g_sms = 148;
bool g_lazy_copies = false;
int g_launches = 0;
int g_clustered_launches = 0;  // blackwell.cu launches no clusters (emu_host.h prints it)
std::vector<std::pair<const char*, size_t>> g_readable;
bool g_failed = false;
Block* g_block = nullptr;
Thread* g_cur = nullptr;
jmp_buf g_sched;
dim3 g_grid, g_blockdim;
static const std::function<void()>* g_body;
uint64_t g_progress = 0;
int g_cc_major = 10;
bool g_lazy_async = false;
std::mt19937 g_async_rng(7);

void Fail(const char* what) {
  fprintf(stderr, "EMU FAILURE: %s (block %u,%u,%u thread %u)\n", what, g_block ? g_block->idx.x : 0,
          g_block ? g_block->idx.y : 0, g_block ? g_block->idx.z : 0, g_cur ? g_cur->tid.x : 0);
  printf("EMU FAILURE: %s\n", what);
  fflush(stdout);
  g_failed = true;
  exit(3);
}

// --- Blackwell state of one block -------------------------------------------
constexpr int kTmemLanes = 128, kTmemCols = 512;
constexpr uint32_t kPoison = 0xFFFFFFFFu;  // a NaN: tensor memory before any write

struct PendingLd { float* dst; std::vector<float> values; };
struct PendingSt { uint32_t lane, col; std::vector<float> values; };
struct MmaOp { uint32_t d; uint64_t a, b; uint32_t idesc; int accumulate; };
// Byte ranges [lo, hi) of shared memory, and column ranges of tensor memory.
struct Range { uint32_t lo, hi; bool Overlaps(const Range& o) const { return lo < o.hi && o.lo < hi; } };
// The issuing thread's asynchronous tcgen05 work in issue order: MMAs and
// the commits that follow them (a commit arrives once every earlier MMA of
// the thread has completed: PTX ISA 9.7.16, tcgen05.commit).
struct AsyncEntry { bool commit; MmaOp op; uint32_t bar; };

struct BwBlock {
  std::vector<uint32_t> tmem;   // lane-major, kTmemLanes x kTmemCols
  int alloc_cols = 0;           // columns allocated (from column 0)
  bool relinquished = false;
  int allocations = 0;
  std::vector<AsyncEntry> mma_queue;  // lazy mode: not yet completed
  int uncommitted = 0;                // MMAs issued since the last commit
  std::map<uint32_t, int> commits;    // mbarrier -> commits that targeted it
  std::vector<std::vector<PendingLd>> ld;  // per thread
  std::vector<std::vector<PendingSt>> st;  // per thread
  std::vector<long> waiting_on;            // per thread: mbarrier, or -1
  std::vector<uint32_t> waiting_parity;
};
static BwBlock* g_bw = nullptr;

// --- Warp collectives --------------------------------------------------------
enum BwKind { kVoteAny = 50, kTmemAllocOp, kTmemDeallocOp };

void PerformWarpOp(int warp) {
  Thread* L = &g_block->threads[warp * 32];
  const int kind = L[0].kind;
  for (int l = 0; l < 32; ++l)
    if (L[l].kind != kind) Fail("divergent warp collective");
  g_progress++;
  switch (kind) {
    case kShfl: {
      uint32_t v[32];
      for (int l = 0; l < 32; ++l) v[l] = L[L[l].in[1]].in[0];
      for (int l = 0; l < 32; ++l) L[l].out[0] = v[l];
      break;
    }
    case kSyncWarp: break;
    case kVoteAny: {
      uint32_t any = 0;
      for (int l = 0; l < 32; ++l) any |= L[l].in[0];
      for (int l = 0; l < 32; ++l) L[l].out[0] = any;
      break;
    }
    case kTmemAllocOp: {
      // PTX ISA 9.7.16, tcgen05.alloc: a power of two of at least 32
      // columns, at most 512; the address goes to shared memory; no
      // allocation after tcgen05.relinquish_alloc_permit.
      const uint32_t slot = L[0].in[0], cols = L[0].in[1];
      for (int l = 0; l < 32; ++l)
        if (L[l].in[0] != slot || L[l].in[1] != cols) Fail("tcgen05.alloc operands differ across the warp");
      if (cols < 32 || cols > 512 || (cols & (cols - 1))) Fail("tcgen05.alloc: columns not a power of 2 in [32, 512]");
      if (g_bw->relinquished) Fail("tcgen05.alloc after tcgen05.relinquish_alloc_permit");
      if (g_bw->alloc_cols + int(cols) > kTmemCols) Fail("tcgen05.alloc: more than 512 columns");
      if (slot % 4 || slot + 4 > g_block->smem.size()) Fail("tcgen05.alloc: address slot outside shared memory");
      const uint32_t addr = uint32_t(g_bw->alloc_cols);  // lane 0, first free column
      memcpy(g_block->smem.data() + slot, &addr, 4);
      g_bw->alloc_cols += int(cols);
      g_bw->allocations++;
      g_bw->relinquished = true;  // the wrapper relinquishes right after
      break;
    }
    case kTmemDeallocOp: {
      const uint32_t taddr = L[0].in[0], cols = L[0].in[1];
      if (taddr != 0 || int(cols) != g_bw->alloc_cols) Fail("tcgen05.dealloc does not match the allocation");
      if (!g_bw->mma_queue.empty()) Fail("tcgen05.dealloc while tcgen05.mma is still running");
      g_bw->alloc_cols = 0;
      break;
    }
    default: Fail("unknown collective");
  }
}

bool VoteAny(bool pred) {
  g_cur->in[0] = pred ? 1 : 0;
  WarpCollective(kVoteAny);
  return g_cur->out[0] != 0;
}

void TmemAlloc(uint32_t slot, uint32_t cols) {
  g_cur->in[0] = slot; g_cur->in[1] = cols;
  WarpCollective(kTmemAllocOp);
}
void TmemDealloc(uint32_t taddr, uint32_t cols) {
  g_cur->in[0] = taddr; g_cur->in[1] = cols;
  WarpCollective(kTmemDeallocOp);
}

// --- Tensor memory loads and stores ------------------------------------------
// PTX ISA 9.7.16, tcgen05.ld / tcgen05.st, shape 32x32b: warp
// w of the CTA reaches lanes 32 (w % 4) .. + 31 only; its thread i moves
// lane (base + i), n consecutive columns. Completion only at
// tcgen05.wait::ld / wait::st (9.7.16, tcgen05.wait): until then (lazy mode) the
// destination registers hold NaN, and stores are not in tensor memory.
static uint32_t TmemLane(uint32_t taddr, int n, const char* what) {
  const uint32_t base = taddr >> 16, col = taddr & 0xFFFF;
  if (base != uint32_t(32 * (g_cur->warp % 4))) {
    static char msg[160];
    snprintf(msg, sizeof msg, "%s: warp %d addresses lane %u; it may reach lanes %d..%d only", what, g_cur->warp,
             base, 32 * (g_cur->warp % 4), 32 * (g_cur->warp % 4) + 31);
    Fail(msg);
  }
  if (int(col) + n > g_bw->alloc_cols) {
    static char msg[160];
    snprintf(msg, sizeof msg, "%s: columns %u..%u outside the %d allocated tensor-memory columns", what, col,
             col + n - 1, g_bw->alloc_cols);
    Fail(msg);
  }
  return base + uint32_t(g_cur->lane);
}
// Races the lazy mode can name at issue: asynchronous work still pending
// that the new operation conflicts with, i.e. a missing wait.
static void CheckTmemRace(uint32_t col, int n, const char* what);

void TmemLoad(uint32_t taddr, float* v, int n) {
  const uint32_t lane = TmemLane(taddr, n, "tcgen05.ld"), col = taddr & 0xFFFF;
  CheckTmemRace(col, n, "tcgen05.ld");
  std::vector<float> values(n);
  memcpy(values.data(), &g_bw->tmem[size_t(lane) * kTmemCols + col], 4 * n);
  if (!g_lazy_async) {
    memcpy(v, values.data(), 4 * n);
  } else {
    for (int i = 0; i < n; ++i) v[i] = NAN;
    g_bw->ld[g_cur->tid.x].push_back({v, std::move(values)});
  }
}
void TmemStore(uint32_t taddr, const float* v, int n) {
  const uint32_t lane = TmemLane(taddr, n, "tcgen05.st"), col = taddr & 0xFFFF;
  CheckTmemRace(col, n, "tcgen05.st");
  if (!g_lazy_async) {
    memcpy(&g_bw->tmem[size_t(lane) * kTmemCols + col], v, 4 * n);
  } else {
    g_bw->st[g_cur->tid.x].push_back({lane, col, std::vector<float>(v, v + n)});
  }
}
void TmemWaitLd() {
  for (auto& p : g_bw->ld[g_cur->tid.x]) memcpy(p.dst, p.values.data(), 4 * p.values.size());
  g_bw->ld[g_cur->tid.x].clear();
}
void TmemWaitSt() {
  for (auto& p : g_bw->st[g_cur->tid.x])
    memcpy(&g_bw->tmem[size_t(p.lane) * kTmemCols + p.col], p.values.data(), 4 * p.values.size());
  g_bw->st[g_cur->tid.x].clear();
}

// --- tcgen05.mma ----------------------------------------------------------------
static uint32_t Swz(uint32_t addr) { return addr ^ (((addr >> 7) & 7) << 4); }
static float SmemElem(uint32_t addr, int type) {
  addr = Swz(addr);
  if (addr % 2 || addr + 2 > g_block->smem.size()) Fail("tcgen05.mma operand outside shared memory");
  uint16_t v;
  memcpy(&v, g_block->smem.data() + addr, 2);
  return type == 0 ? HalfToFloat(v) : Bf16ToFloat(v);
}

// PTX ISA 9.7.16.4.1, shared memory descriptor: start address, LBO and SBO
// (bits 0-13, 16-29, 32-45, each the byte value >> 4), the fixed 0b001 at
// bits 46-48, base offset (49-51), LBO mode (52), swizzle mode (61-63).
struct SmemDesc { uint32_t start, lbo, sbo; };
static SmemDesc DecodeSmemDesc(uint64_t d) {
  if (((d >> 46) & 7) != 1) Fail("shared memory descriptor: bits 46-48 are not the fixed 0b001");
  if (((d >> 49) & 7) != 0) Fail("shared memory descriptor: non-zero base offset (the tiles are 1024-byte aligned)");
  if ((d >> 52) & 1) Fail("shared memory descriptor: absolute LBO mode (sm_103a only)");
  if (((d >> 53) & 0xFF) != 0) Fail("shared memory descriptor: bits 53-60 not zero");
  if ((d >> 61) != 2) Fail("shared memory descriptor: swizzle mode is not 2 (128-byte swizzle)");
  return {uint32_t(d & 0x3FFF) << 4, uint32_t((d >> 16) & 0x3FFF) << 4, uint32_t((d >> 32) & 0x3FFF) << 4};
}

// PTX ISA 9.7.16.4.2, instruction descriptor for .kind::f16 (Table 42).
struct InstrDesc { int m, n, atype, btype; bool transpose_a, transpose_b; };
static InstrDesc DecodeInstrDesc(uint32_t i) {
  if ((i >> 2) & 1) Fail("instruction descriptor: sparsity set");
  if (((i >> 4) & 3) != 1) Fail("instruction descriptor: D type is not F32");
  InstrDesc r;
  r.atype = (i >> 7) & 7; r.btype = (i >> 10) & 7;
  if (r.atype > 1 || r.btype > 1) Fail("instruction descriptor: A/B type not F16 or BF16");
  if ((i >> 13) & 3) Fail("instruction descriptor: negate A/B not emulated");
  r.transpose_a = (i >> 15) & 1; r.transpose_b = (i >> 16) & 1;
  r.n = int((i >> 17) & 0x3F) << 3;
  r.m = int((i >> 24) & 0x1F) << 4;
  if ((i >> 23) & 1 || (i >> 29) & 1) Fail("instruction descriptor: reserved bit set");
  // 9.7.16, tcgen05.mma shapes: .cta_group::1 .kind::f16 takes M = 64 or 128, N a
  // multiple of 16 (M = 128) from 16 to 256; only M = 128 is emulated.
  if (r.m != 128) Fail("instruction descriptor: M is not 128 (the only shape emulated)");
  if (r.n < 16 || r.n > 256 || r.n % 16) Fail("instruction descriptor: N not a multiple of 16 in [16, 256]");
  if (r.transpose_a) Fail("instruction descriptor: MN-major A not emulated");
  return r;
}

// D (tensor memory, data path layout D of 9.7.16.10.5 for M = 128 and
// .cta_group::1: row i in lane i, column j in column base + j) = A B (+ D),
// K = 16; A 128 x 16 K-major, B K-major (N rows of 16) or MN-major.
static void ExecuteMma(const MmaOp& op) {
  const InstrDesc id = DecodeInstrDesc(op.idesc);
  const SmemDesc a = DecodeSmemDesc(op.a), b = DecodeSmemDesc(op.b);
  const uint32_t lane0 = op.d >> 16, col0 = op.d & 0xFFFF;
  if (lane0 != 0) Fail("tcgen05.mma: D does not start at lane 0 (M = 128 takes all lanes)");
  if (int(col0) + id.n > g_bw->alloc_cols) {
    static char msg[160];
    snprintf(msg, sizeof msg, "tcgen05.mma: D columns %u..%u outside the %d allocated tensor-memory columns", col0,
             col0 + id.n - 1, g_bw->alloc_cols);
    Fail(msg);
  }
  static double A[128][16], B[16][256];
  for (int m = 0; m < 128; ++m)
    for (int k = 0; k < 16; ++k)
      A[m][k] = SmemElem(a.start + (m / 8) * a.sbo + (m % 8) * 128 + 2 * k, id.atype);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < id.n; ++n)
      B[k][n] = id.transpose_b
                    ? SmemElem(b.start + (k / 8) * b.sbo + (k % 8) * 128 + (n / 64) * b.lbo + 2 * (n % 64), id.btype)
                    : SmemElem(b.start + (n / 8) * b.sbo + (n % 8) * 128 + 2 * k, id.btype);
  for (int m = 0; m < 128; ++m) {
    uint32_t* row = &g_bw->tmem[size_t(m) * kTmemCols + col0];
    for (int n = 0; n < id.n; ++n) {
      double acc = 0;
      if (op.accumulate) { float f; memcpy(&f, &row[n], 4); acc = f; }
      for (int k = 0; k < 16; ++k) acc += A[m][k] * B[k][n];
      const float f = float(acc);
      memcpy(&row[n], &f, 4);
    }
  }
}

static void MbarArriveAsync(uint32_t bar);

// The shared memory an MMA's A and B operands span (whole 128-byte rows),
// and the tensor-memory columns of its D.
static Range OperandRange(uint64_t desc, bool mn_major, int rows_or_n) {
  const SmemDesc d = DecodeSmemDesc(desc);
  uint32_t lo = UINT32_MAX, hi = 0;
  auto row = [&](uint32_t a) { lo = std::min(lo, a & ~127u); hi = std::max(hi, (a & ~127u) + 128); };
  if (!mn_major) {
    for (int m = 0; m < rows_or_n; ++m) row(d.start + (m / 8) * d.sbo + (m % 8) * 128);
  } else {
    for (int k = 0; k < 16; ++k)
      for (int nb = 0; nb < (rows_or_n + 63) / 64; ++nb) row(d.start + (k / 8) * d.sbo + (k % 8) * 128 + nb * d.lbo);
  }
  return {lo, hi};
}
static Range ARange(const MmaOp& op) { return OperandRange(op.a, false, DecodeInstrDesc(op.idesc).m); }
static Range BRange(const MmaOp& op) {
  const InstrDesc id = DecodeInstrDesc(op.idesc);
  return OperandRange(op.b, id.transpose_b, id.n);
}
static Range DColumns(const MmaOp& op) {
  const uint32_t col = op.d & 0xFFFF;
  return {col, col + uint32_t(DecodeInstrDesc(op.idesc).n)};
}
static Range TmaRange(const TmaOp& op) {
  EmuMap em;
  memcpy(&em, op.map, sizeof em);
  return {op.dst, op.dst + em.box[0] * 2 * em.box[1] * em.box[2] * em.box[3]};
}
static void CheckTmemRace(uint32_t col, int n, const char* what) {
  const Range cols{col, col + uint32_t(n)};
  for (const AsyncEntry& e : g_bw->mma_queue)
    if (!e.commit && DColumns(e.op).Overlaps(cols)) {
      static char msg[200];
      snprintf(msg, sizeof msg,
               "%s of tensor-memory columns %u..%u that a tcgen05.mma not yet complete writes (a missing wait for "
               "its tcgen05.commit)", what, col, col + n - 1);
      Fail(msg);
    }
}

// PTX ISA 9.7.16, tcgen05.mma: issued by one thread, asynchronous.
void MmaIssue(uint32_t d, uint64_t a, uint64_t b, uint32_t idesc, int accumulate) {
  if (g_bw->alloc_cols == 0) Fail("tcgen05.mma without allocated tensor memory");
  MmaOp op{d, a, b, idesc, accumulate};
  // Operands that a TMA load not yet complete still writes; D columns with
  // tcgen05.st not yet waited for.
  const Range ar = ARange(op), br = BRange(op), dc = DColumns(op);
  for (const TmaOp& t : g_block->tma_pending)
    if (TmaRange(t).Overlaps(ar) || TmaRange(t).Overlaps(br))
      Fail("tcgen05.mma reads shared memory that a TMA load not yet complete writes (a missing mbarrier wait)");
  for (const auto& pending : g_bw->st)
    for (const PendingSt& st : pending)
      if (dc.Overlaps({st.col, st.col + uint32_t(st.values.size())}))
        Fail("tcgen05.mma on tensor-memory columns with a tcgen05.st not yet waited for (tcgen05.wait::st)");
  g_bw->uncommitted++;
  if (g_lazy_async) g_bw->mma_queue.push_back({false, op, 0});
  else ExecuteMma(op);
  g_progress++;
}
void MmaCommit(uint32_t bar) {
  g_bw->uncommitted = 0;
  g_bw->commits[bar]++;
  if (g_lazy_async) g_bw->mma_queue.push_back({true, {}, bar});
  else MbarArriveAsync(bar);
  g_progress++;
}
// Lazy mode: completes the oldest MMAs up to and including the next commit
// (any commit; with `bar`, the first commit to that mbarrier).
static bool CompleteMmaGroup(long bar = -1) {
  auto& q = g_bw->mma_queue;
  size_t end = 0;
  while (end < q.size() && !(q[end].commit && (bar < 0 || q[end].bar == uint32_t(bar)))) ++end;
  if (end == q.size()) return false;  // no such commit yet: nothing it must complete
  for (size_t i = 0; i <= end; ++i) {
    if (q[i].commit) MbarArriveAsync(q[i].bar);
    else ExecuteMma(q[i].op);
  }
  q.erase(q.begin(), q.begin() + end + 1);
  return true;
}

// --- mbarriers, TMA and setmaxnreg (emu_sync.h); the TMA issue and wait ---
#include "emu_sync.h"
static void MbarArriveAsync(uint32_t bar) { MbarArrive(bar); }

void TmaLoad(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2, int c3) {
  TmaOp op{dst, map, bar, {c0, c1, c2, c3}};
  const Range dr = TmaRange(op);
  for (const AsyncEntry& e : g_bw->mma_queue)
    if (!e.commit && (ARange(e.op).Overlaps(dr) || BRange(e.op).Overlaps(dr)))
      Fail("TMA load into shared memory that a tcgen05.mma not yet complete reads (a missing wait for its "
           "tcgen05.commit)");
  if (g_lazy_async) g_block->tma_pending.push_back(op);
  else DoTma(op);
}
// mbarrier.try_wait.parity in a loop: returns once the phase with parity
// `parity` has completed. In lazy mode, asynchronous work completes as
// late as it can: a wait completes only the work that arrives on its own
// barrier (its TMA boxes in random order; MMAs in issue order up to a
// commit to it), so that work nobody waited for is still pending when it
// is used; the rest completes when nothing else can go on (RunGrid).
void MbarWait(uint32_t bar, uint32_t parity) {
  for (;;) {
    if ((Bar(bar).phase & 1) != parity) {
      g_bw->waiting_on[g_cur->tid.x] = -1;
      return;
    }
    auto& pend = g_block->tma_pending;
    std::vector<size_t> mine;
    for (size_t i = 0; i < pend.size(); ++i)
      if (pend[i].bar == bar) mine.push_back(i);
    if (!mine.empty()) {
      const size_t k = mine[g_async_rng() % mine.size()];
      TmaOp op = pend[k];
      pend.erase(pend.begin() + k);
      DoTma(op);
      continue;
    }
    if (CompleteMmaGroup(long(bar))) continue;
    g_bw->waiting_on[g_cur->tid.x] = long(bar);
    g_bw->waiting_parity[g_cur->tid.x] = parity;
    Yield();
  }
}

// Lazy mode, when no thread can go on: one piece of pending asynchronous
// work completes (a TMA box, or the oldest MMA group); false if none.
static bool CompleteSomeAsyncWork() {
  auto& pend = g_block->tma_pending;
  const bool mma_ready = std::any_of(g_bw->mma_queue.begin(), g_bw->mma_queue.end(),
                                     [](const AsyncEntry& e) { return e.commit; });
  const size_t choices = pend.size() + (mma_ready ? 1 : 0);
  if (choices == 0) return false;
  const size_t k = g_async_rng() % choices;
  if (k < pend.size()) {
    TmaOp op = pend[k];
    pend.erase(pend.begin() + k);
    DoTma(op);
  } else {
    CompleteMmaGroup();
  }
  return true;
}

// --- The grid ----------------------------------------------------------------
static void Trampoline() {
  (*g_body)();
  g_cur->done = true;
  g_progress++;
  _longjmp(g_sched, 1);
}

static std::vector<std::vector<char>> g_stacks;

// Names what every stuck thread waits for.
static void FailDeadlock() {
  Block& b = *g_block;
  for (auto& t : b.threads)
    if (!t.done && t.regs_wait)
      Fail("deadlock: setmaxnreg.inc waits for registers the block does not have (the counts after "
           "setmaxnreg exceed the allocation at launch)");
  std::map<long, int> waits;
  for (auto& t : b.threads)
    if (!t.done && g_bw->waiting_on[t.tid.x] >= 0) waits[g_bw->waiting_on[t.tid.x]]++;
  std::string msg = "deadlock:";
  for (auto& [bar, n] : waits) {
    const MBar& m = b.mbars[uint32_t(bar)];
    const auto c = g_bw->commits.find(uint32_t(bar));
    char part[240];
    snprintf(part, sizeof part,
             " %d thread(s) wait on the mbarrier at shared offset %ld (phase %u, %d of %d arrivals pending, %ld "
             "transaction bytes; %s);",
             n, bar, m.phase, m.pending, m.count, m.tx,
             c == g_bw->commits.end() ? "no tcgen05.commit ever targeted it"
                                      : "a tcgen05.commit target");
    msg += part;
  }
  if (g_bw->uncommitted > 0) msg += " tcgen05.mma issued with no tcgen05.commit after it;";
  static std::string keep;
  keep = msg;
  Fail(keep.c_str());
}

void RunGrid(dim3 grid, dim3 block, size_t smem, const std::function<void()>& body) {
  g_launches++;
  g_grid = grid; g_blockdim = block; g_body = &body;
  if (smem > 227 * 1024) Fail("too much shared memory");
  std::vector<dim3> order;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) order.push_back(dim3(x, y, z));
  std::mt19937 rng(order.size());
  std::shuffle(order.begin(), order.end(), rng);
  const size_t kStack = 256 * 1024;
  if (g_stacks.size() < block.x) g_stacks.resize(block.x, std::vector<char>(kStack));
  for (auto idx : order) {
    Block b;
    b.idx = idx;
    b.smem.assign(std::max<size_t>(smem, 16), 0xFF);
    b.threads.resize(block.x);
    b.warp_arrived.assign((block.x + 31) / 32, 0);
    b.warp_gen.assign((block.x + 31) / 32, 0);
    BwBlock bw;
    bw.tmem.assign(size_t(kTmemLanes) * kTmemCols, kPoison);
    bw.ld.resize(block.x); bw.st.resize(block.x);
    bw.waiting_on.assign(block.x, -1); bw.waiting_parity.assign(block.x, 0);
    g_block = &b;
    g_bw = &bw;
    for (unsigned i = 0; i < block.x; ++i) {
      Thread& t = b.threads[i];
      t.tid = dim3(i, 0, 0); t.lane = i % 32; t.warp = i / 32;
      t.regs = std::min(255u, 65536u / block.x / 8 * 8);  // __launch_bounds__(threads, 1)
      getcontext(&t.ctx);
      t.ctx.uc_stack.ss_sp = g_stacks[i].data();
      t.ctx.uc_stack.ss_size = kStack;
      t.ctx.uc_link = nullptr;
      makecontext(&t.ctx, Trampoline, 0);
    }
    for (;;) {
      bool all_done = true;
      uint64_t before = g_progress;
      for (auto& t : b.threads) {
        if (t.done) continue;
        all_done = false;
        g_cur = &t;
        if (_setjmp(g_sched)) continue;  // it yielded or ended
        if (t.started) _longjmp(t.resume, 1);
        t.started = true;
        setcontext(&t.ctx);
      }
      if (all_done) break;
      if (g_progress == before && !CompleteSomeAsyncWork()) FailDeadlock();
    }
    g_cur = nullptr;
    if (!b.tma_pending.empty()) Fail("TMA pending at block exit");
    if (bw.uncommitted > 0) Fail("tcgen05.mma issued but never committed at block exit");
    if (!bw.mma_queue.empty()) Fail("tcgen05.mma still running at block exit");
    for (auto& s : bw.st)
      if (!s.empty()) Fail("tcgen05.st not waited for (tcgen05.wait::st) before the thread ended");
    if (bw.allocations > 1) Fail("the block allocated tensor memory more than once");
    if (bw.alloc_cols != 0) Fail("tensor memory not deallocated at block exit");
    g_block = nullptr;
    g_bw = nullptr;
  }
}
}  // namespace emu


#include "emu_host.h"

int main(int argc, char** argv) {
  // Every shape class of task.json at small sizes (name prefix = class).
  std::vector<Scen> all = {
      {"grid_hd128_full_s300_bf16", 1, 300, 300, 2, 2, 128, 0, true},
      {"grid_hd128_causal_s300_bf16", 1, 300, 300, 2, 2, 128, 1, true},
      {"grid_hd128_causal_s257_f16", 1, 257, 257, 1, 1, 128, 1, false},
      {"grid_hd64_full_s400_f16", 1, 400, 400, 1, 1, 64, 0, false},
      {"grid_hd64_causal_s513_bf16", 1, 513, 513, 1, 1, 64, 1, true},
      {"grid_hd256_full_s200_bf16", 1, 200, 200, 1, 1, 256, 0, true},
      {"grid_hd256_causal_s260_f16", 1, 260, 260, 1, 1, 256, 1, false},
      {"gqa4_hd128_causal_q200_k300_h8", 1, 200, 300, 8, 2, 128, 1, true},
      {"gqa8_hd64_full_s150_h8", 1, 150, 150, 8, 1, 64, 0, false},
      {"mqa_hd256_causal_s140_h3_b2", 2, 140, 140, 3, 1, 256, 1, true},
      {"ragged_hd128_full_q100_k1001", 1, 100, 1001, 1, 1, 128, 0, true},
      {"ragged_hd64_causal_s333_b2", 2, 333, 333, 1, 1, 64, 1, false},
      {"prefill_hd128_causal_q130_k700", 1, 130, 700, 1, 1, 128, 1, true},
      {"prefill_hd64_full_q64_k1025_gqa4_f16", 1, 64, 1025, 4, 1, 64, 0, false},
      {"decode_hd128_causal_q1_k900_b3", 3, 1, 900, 2, 2, 128, 1, true},
      {"decode_hd64_full_q16_k600_gqa8", 1, 16, 600, 8, 1, 64, 0, false},
      {"decode_hd256_causal_q4_k500_gqa2", 2, 4, 500, 4, 2, 256, 1, true},
      {"decode_b16_k128_gqa4_hd128", 16, 1, 128, 4, 1, 128, 0, true},
      {"qlong_hd128_causal_q300_k100", 1, 300, 100, 1, 1, 128, 1, true},
      {"qlong_hd64_causal_q200_k1_b2", 2, 200, 1, 1, 1, 64, 1, false},
      {"qlong_hd256_full_q260_k1", 1, 260, 1, 1, 1, 256, 0, true},
      {"many_short_b9_s8_hd128_causal", 9, 8, 8, 2, 2, 128, 1, false},
      {"many_short_b5_s65_hd64_full", 5, 65, 65, 2, 1, 64, 0, true},
      {"long_single_hd128_causal_s1500", 1, 1500, 1500, 1, 1, 128, 1, true},
      {"heads1_hd64_full_s200_b3", 3, 200, 200, 1, 1, 64, 0, true},
      {"dims_hd80_full_s200_bf16", 1, 200, 200, 2, 2, 80, 0, true},
      {"dims_hd96_causal_s300_f16", 1, 300, 300, 1, 1, 96, 1, false},
      {"dims_hd160_causal_s150_bf16", 1, 150, 150, 1, 1, 160, 1, true},
      {"dims_hd192_full_q130_k260_f16", 1, 130, 260, 1, 1, 192, 0, false},
      {"dims_hd72_full_s100_gqa2", 1, 100, 100, 2, 1, 72, 0, true},
      {"dims_hd136_causal_q90_k200", 1, 90, 200, 1, 1, 136, 1, true},
      {"dims_hd248_full_s100_f16", 1, 100, 100, 1, 1, 248, 0, false},
      // Row maxima that grow by more than 2^8 from tile to tile: the
      // lazy rescale's rescaling branch, not only its skip.
      {"rescale_hd128_full_q130_k700_qstd6", 1, 130, 700, 1, 1, 128, 0, true, 1, 6.f},
      {"rescale_hd64_causal_s600_qstd6_f16", 1, 600, 600, 1, 1, 64, 1, false, 1, 6.f},
      // On 148 SMs: few blocks, so the keys are split (up to 32 ways) and
      // CombineSplits merges the partials; splits whose rows see no key.
      {"split_decode_hd128_causal_q1_k3000_b2", 2, 1, 3000, 2, 2, 128, 1, true, 148},
      {"split_decode_hd64_full_q4_k2000_gqa8_f16", 1, 4, 2000, 8, 1, 64, 0, false, 148},
      {"split_decode_hd256_causal_q16_k1500_gqa4", 1, 16, 1500, 4, 1, 256, 1, true, 148},
      {"split_decode_hd96_full_q1_k777_b3_f16", 3, 1, 777, 1, 1, 96, 0, false, 148},
      {"split_prefill_hd64_causal_q200_k2000", 1, 200, 2000, 1, 1, 64, 1, true, 148},
      {"split_prefill_hd128_full_q300_k1500_f16", 1, 300, 1500, 2, 2, 128, 0, false, 148},
      {"split_qlong_hd128_causal_q1100_k1000", 1, 1100, 1000, 1, 1, 128, 1, true, 148},
      {"split_rescale_hd160_causal_q130_k2100_qstd6", 1, 130, 2100, 1, 1, 160, 1, true, 148, 6.f},
      // GQA decode packed into the rows (row = query x pack + head): pack
      // not dividing 128 (rows past pack x q_rows unused), several query
      // tiles of a pack, causal, with and without split keys.
      {"pack_hd128_causal_q5_k700_gqa3_h6", 1, 5, 700, 6, 2, 128, 1, true},
      {"pack_hd64_full_q16_k300_gqa5_b2_f16", 2, 16, 300, 10, 2, 64, 0, false},
      {"pack_hd128_causal_q16_k500_mqa16", 1, 16, 500, 16, 1, 128, 1, true},
      {"pack_hd256_causal_q9_k400_mqa12_f16", 1, 9, 400, 12, 1, 256, 1, false},
      {"split_pack_hd128_causal_q3_k2500_gqa6_b2", 2, 3, 2500, 12, 2, 128, 1, true, 148},
      {"split_pack_hd80_full_q16_k1800_mqa32_f16", 1, 16, 1800, 32, 1, 80, 0, false, 148},
  };
  return RunShapes(argc, argv, all);
}
