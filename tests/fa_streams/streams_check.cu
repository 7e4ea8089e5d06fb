// Calls of a flash_attention_fwd kernel library on several streams at once,
// and captured into a CUDA graph, against the same calls made one at a time.
//
//   nvcc -O2 -std=c++17 -arch=sm_90a -I harness/include -o streams_check \
//     tests/fa_streams/streams_check.cu -ldl
//   streams_check KERNEL.so [--rounds N]
//
// KERNEL.so exports kseek_launch (harness/include/kernelseek/abi.h), built
// as the harness builds a candidate. The shapes take every path that uses
// scratch memory in hopper.cu: the WGMMA kernel's work queue (causal head_dim
// 128, head_dim 64), its split keys (a short query range over long keys),
// the decode kernel's long splits and version 1's splits. Each is first run
// alone on one stream (the reference). Then:
//   1. rounds of calls on four streams at once, each stream running one
//      shape after another into its own outputs (cleared to NaN on the
//      stream first), so that calls of different shapes overlap;
//   2. a graph captured from calls of three shapes, launched on one stream
//      while eager calls of the same shapes run on two others;
//   3. rounds of the split-key shapes' calls on 24 streams at once, more
//      than the kernel keeps partials buffers for (16), so that buffers
//      are freed for other streams while calls still run.
// Every output must equal its reference bit for bit (the kernels are
// deterministic: a call's result does not depend on which block took which
// item). Then the host time of kseek_launch per call on one stream, for
// information. Exit 0 and "streams_check: all match" when every output
// matched; 1 with the first mismatches named; 2 when the check could not
// run.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernelseek/abi.h"

namespace {

struct Shape {
  const char* name;
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim, causal;
};

const Shape kShapes[] = {
    {"wgmma_queue_hd128_causal", 2, 2048, 2048, 16, 16, 128, 1},
    {"wgmma_queue_hd64_full", 4, 1024, 1024, 16, 16, 64, 0},
    {"wgmma_split_keys_q256_k16384", 1, 256, 16384, 8, 8, 128, 0},
    {"decode_long_splits_b1_k32768_gqa8", 1, 1, 32768, 32, 4, 128, 0},
    {"decode_b4_k16384_gqa8", 4, 1, 16384, 32, 4, 128, 0},
    {"v1_split_keys_q64_k8192_hd64", 2, 64, 8192, 8, 8, 64, 1},
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "streams_check: %s failed: %s (line %d)\n", #call,      \
              cudaGetErrorString(e_), __LINE__);                               \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

// Values in [-2, 2) from a hash of the index and a seed.
__global__ void Fill(__nv_bfloat16* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed * 0x9E3779B9u ^ uint32_t(i >> 32);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    x[i] = __float2bfloat16(float(h & 0xFFFF) / 16384.f - 2.f);
  }
}

size_t QElements(const Shape& s) {
  return size_t(s.batch) * s.seqlen_q * s.heads_q * s.head_dim;
}
size_t KvElements(const Shape& s) {
  return size_t(s.batch) * s.seqlen_k * s.heads_kv * s.head_dim;
}
size_t LseElements(const Shape& s) { return size_t(s.batch) * s.heads_q * s.seqlen_q; }

struct Inputs {
  __nv_bfloat16 *q, *k, *v;
};
struct Outputs {
  __nv_bfloat16* o;
  float* lse;
};

Outputs NewOutputs(const Shape& s) {
  Outputs out;
  CHECK_CUDA(cudaMalloc(&out.o, QElements(s) * 2));
  CHECK_CUDA(cudaMalloc(&out.lse, LseElements(s) * 4));
  return out;
}

kseek_launch_fn g_launch;
const char* (*g_message)(void);

// One call of the kernel on `stream`, its outputs cleared to NaN first.
void Call(const Shape& s, const Inputs& in, const Outputs& out, cudaStream_t stream) {
  CHECK_CUDA(cudaMemsetAsync(out.o, 0xFF, QElements(s) * 2, stream));
  CHECK_CUDA(cudaMemsetAsync(out.lse, 0xFF, LseElements(s) * 4, stream));
  const kseek_param params[8] = {{"batch", s.batch},       {"seqlen_q", s.seqlen_q},
                                 {"seqlen_k", s.seqlen_k}, {"heads_q", s.heads_q},
                                 {"heads_kv", s.heads_kv}, {"head_dim", s.head_dim},
                                 {"causal", s.causal},     {"dtype", KSEEK_BF16}};
  kseek_tensor t[5] = {};
  void* data[5] = {in.q, in.k, in.v, out.o, out.lse};
  const char* names[5] = {"q", "k", "v", "o", "lse"};
  for (int i = 0; i < 5; ++i) {
    t[i].name = names[i];
    t[i].data = data[i];
  }
  const kseek_launch_args args = {KSEEK_ABI_VERSION, 8, params, 5, t, stream};
  if (g_launch(&args) != 0) {
    fprintf(stderr, "streams_check: %s: kseek_launch failed: %s\n", s.name,
            g_message != nullptr ? g_message() : "(no message)");
    exit(2);
  }
}

struct Host {
  std::vector<uint16_t> o;
  std::vector<float> lse;
};

Host Download(const Shape& s, const Outputs& out) {
  Host h;
  h.o.resize(QElements(s));
  h.lse.resize(LseElements(s));
  CHECK_CUDA(cudaMemcpy(h.o.data(), out.o, h.o.size() * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(h.lse.data(), out.lse, h.lse.size() * 4, cudaMemcpyDeviceToHost));
  return h;
}

int g_compared = 0, g_mismatched = 0;

// Compares a call's outputs with the reference's, bit for bit.
void Expect(const Shape& s, const Host& ref, const Outputs& out, const std::string& what) {
  const Host got = Download(s, out);
  ++g_compared;
  size_t bad_o = 0, bad_lse = 0, first = SIZE_MAX;
  for (size_t i = 0; i < ref.o.size(); ++i)
    if (ref.o[i] != got.o[i]) {
      if (first == SIZE_MAX) first = i;
      ++bad_o;
    }
  for (size_t i = 0; i < ref.lse.size(); ++i)
    if (memcmp(&ref.lse[i], &got.lse[i], 4) != 0) ++bad_lse;
  if (bad_o == 0 && bad_lse == 0) return;
  ++g_mismatched;
  if (g_mismatched <= 12)
    printf("MISMATCH %s (%s): %zu of %zu O elements (first at %zu), %zu of %zu LSE rows\n",
           s.name, what.c_str(), bad_o, ref.o.size(), first, bad_lse, ref.lse.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: streams_check KERNEL.so [--rounds N]\n");
    return 2;
  }
  int rounds = 6;
  for (int i = 2; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fprintf(stderr, "streams_check: cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  g_launch = reinterpret_cast<kseek_launch_fn>(dlsym(lib, "kseek_launch"));
  g_message = reinterpret_cast<const char* (*)(void)>(dlsym(lib, "kseek_error_message"));
  if (g_launch == nullptr) {
    fprintf(stderr, "streams_check: %s exports no kseek_launch\n", argv[1]);
    return 2;
  }

  constexpr int kStreams = 4;
  cudaStream_t streams[kStreams + 1];
  for (cudaStream_t& st : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  Inputs in[kNumShapes];
  Host ref[kNumShapes];
  for (int i = 0; i < kNumShapes; ++i) {
    const Shape& s = kShapes[i];
    CHECK_CUDA(cudaMalloc(&in[i].q, QElements(s) * 2));
    CHECK_CUDA(cudaMalloc(&in[i].k, KvElements(s) * 2));
    CHECK_CUDA(cudaMalloc(&in[i].v, KvElements(s) * 2));
    Fill<<<512, 256>>>(in[i].q, QElements(s), 3 * i + 1);
    Fill<<<512, 256>>>(in[i].k, KvElements(s), 3 * i + 2);
    Fill<<<512, 256>>>(in[i].v, KvElements(s), 3 * i + 3);
    CHECK_CUDA(cudaDeviceSynchronize());
    const Outputs out = NewOutputs(s);
    Call(s, in[i], out, streams[0]);
    CHECK_CUDA(cudaStreamSynchronize(streams[0]));
    ref[i] = Download(s, out);
    size_t nan = 0;
    for (float x : ref[i].lse) nan += x != x;
    printf("reference %-36s done (%zu NaN LSE rows)\n", s.name, nan);
  }

  // 1. Four streams at once, each taking every shape in turn.
  std::vector<Outputs> outs(size_t(kStreams) * kNumShapes);
  for (int st = 0; st < kStreams; ++st)
    for (int i = 0; i < kNumShapes; ++i) outs[st * kNumShapes + i] = NewOutputs(kShapes[i]);
  for (int r = 0; r < rounds; ++r) {
    for (int turn = 0; turn < kNumShapes; ++turn)
      for (int st = 0; st < kStreams; ++st) {
        const int i = (st + r + turn) % kNumShapes;
        Call(kShapes[i], in[i], outs[st * kNumShapes + i], streams[st]);
      }
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int st = 0; st < kStreams; ++st)
      for (int i = 0; i < kNumShapes; ++i)
        Expect(kShapes[i], ref[i], outs[st * kNumShapes + i],
               "round " + std::to_string(r) + ", stream " + std::to_string(st));
  }
  printf("concurrent streams: %d outputs compared, %d mismatched\n", g_compared, g_mismatched);

  // 2. A graph of three shapes' calls, launched beside eager calls.
  const int graph_shapes[3] = {0, 2, 3};
  Outputs graph_outs[3];
  for (int j = 0; j < 3; ++j) graph_outs[j] = NewOutputs(kShapes[graph_shapes[j]]);
  cudaStream_t capture = streams[kStreams];
  CHECK_CUDA(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
  for (int j = 0; j < 3; ++j) {
    const int i = graph_shapes[j];
    Call(kShapes[i], in[i], graph_outs[j], capture);
  }
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamEndCapture(capture, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const int before = g_mismatched;
  for (int r = 0; r < rounds; ++r) {
    CHECK_CUDA(cudaGraphLaunch(exec, capture));
    for (int j = 0; j < 3; ++j)
      for (int st = 0; st < 2; ++st) {
        const int i = graph_shapes[(j + st) % 3];
        Call(kShapes[i], in[i], outs[st * kNumShapes + i], streams[st]);
      }
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int j = 0; j < 3; ++j) {
      const int i = graph_shapes[j];
      Expect(kShapes[i], ref[i], graph_outs[j], "graph launch " + std::to_string(r));
      for (int st = 0; st < 2; ++st)
        Expect(kShapes[i], ref[i], outs[st * kNumShapes + i],
               "beside graph launch " + std::to_string(r) + ", stream " + std::to_string(st));
    }
  }
  printf("graph beside eager calls: %d mismatched\n", g_mismatched - before);

  // 3. More streams than the kernel keeps split partials for (16), each
  // taking the split-key shapes in turn: buffers are grown, and freed for
  // another stream, while other streams' calls still run.
  constexpr int kManyStreams = 24;
  const int split_shapes[4] = {2, 3, 4, 5};
  std::vector<cudaStream_t> many(kManyStreams);
  for (cudaStream_t& st : many) CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::vector<Outputs> many_outs(size_t(kManyStreams) * 4);
  for (int st = 0; st < kManyStreams; ++st)
    for (int j = 0; j < 4; ++j) many_outs[st * 4 + j] = NewOutputs(kShapes[split_shapes[j]]);
  const int before_many = g_mismatched;
  for (int r = 0; r < rounds; ++r) {
    for (int turn = 0; turn < 2; ++turn)
      for (int st = 0; st < kManyStreams; ++st) {
        const int j = (st + r + turn) % 4, i = split_shapes[j];
        Call(kShapes[i], in[i], many_outs[st * 4 + j], many[st]);
      }
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int st = 0; st < kManyStreams; ++st)
      for (int turn = 0; turn < 2; ++turn) {
        const int j = (st + r + turn) % 4, i = split_shapes[j];
        Expect(kShapes[i], ref[i], many_outs[st * 4 + j],
               "many streams, round " + std::to_string(r) + ", stream " + std::to_string(st));
      }
  }
  printf("%d streams: %d mismatched\n", kManyStreams, g_mismatched - before_many);

  // Host time of a call (information only: enqueueing, not the GPU's time).
  for (int i = 0; i < kNumShapes; ++i) {
    const Shape& s = kShapes[i];
    const Outputs& out = outs[i];
    const kseek_param params[8] = {{"batch", s.batch},       {"seqlen_q", s.seqlen_q},
                                   {"seqlen_k", s.seqlen_k}, {"heads_q", s.heads_q},
                                   {"heads_kv", s.heads_kv}, {"head_dim", s.head_dim},
                                   {"causal", s.causal},     {"dtype", KSEEK_BF16}};
    kseek_tensor t[5] = {};
    void* data[5] = {in[i].q, in[i].k, in[i].v, out.o, out.lse};
    for (int k = 0; k < 5; ++k) t[k].data = data[k];
    const kseek_launch_args args = {KSEEK_ABI_VERSION, 8, params, 5, t, streams[0]};
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      CHECK_CUDA(cudaStreamSynchronize(streams[0]));
      constexpr int kCalls = 20;
      const auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < kCalls; ++c) g_launch(&args);
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          kCalls;
      if (us < best) best = us;
    }
    printf("host time per call %-36s %7.1f us\n", s.name, best);
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  if (g_mismatched == 0) {
    printf("streams_check: all match (%d outputs)\n", g_compared);
    return 0;
  }
  printf("streams_check: %d of %d outputs differ from a call made alone\n", g_mismatched,
         g_compared);
  return 1;
}
