// How many 2-block clusters of the WGMMA kernel's size (one block per SM:
// 384 threads, the shared memory given in KB) an H200 runs at once: what
// cudaOccupancyMaxActiveClusters says, and what a launch of one cluster per
// SM pair shows (each block counts itself in at start and waits, up to a
// bound, until every block of the grid has; the count it saw is kept).
//   nvcc -gencode=arch=compute_90a,code=sm_90a -o probe cluster_probe.cu && ./probe 200
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__device__ int g_arrived;
__device__ int g_seen_max;
__device__ unsigned g_sm[1024];

__global__ void Probe(int blocks, long long spin) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0) {
    smem[0] = 1;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
    g_sm[blockIdx.x] = sm;
    atomicAdd(&g_arrived, 1);
    const long long start = clock64();
    int seen = 0;
    while (clock64() - start < spin) {
      seen = *(volatile int*)&g_arrived;
      if (seen >= blocks) break;
    }
    atomicMax(&g_seen_max, seen);
  }
}

int main(int argc, char** argv) {
  const int kb = argc > 1 ? atoi(argv[1]) : 200;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t smem = size_t(kb) * 1024;
  cudaFuncSetAttribute(Probe, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(sms));
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = smem;
  config.attrs = attr;
  config.numAttrs = 1;
  int fit = -1;
  cudaError_t e = cudaOccupancyMaxActiveClusters(&fit, Probe, &config);
  printf("SMs %d, %d KB shared memory per block: cudaOccupancyMaxActiveClusters %d (%s)\n", sms, kb,
         fit, cudaGetErrorString(e));
  for (int clusters = sms / 2; clusters >= sms / 2 - 8; clusters -= 2) {
    int zero = 0;
    cudaMemcpyToSymbol(g_arrived, &zero, sizeof(int));
    cudaMemcpyToSymbol(g_seen_max, &zero, sizeof(int));
    config.gridDim = dim3(unsigned(2 * clusters));
    e = cudaLaunchKernelEx(&config, Probe, 2 * clusters, (long long)2000000000);
    cudaDeviceSynchronize();
    int seen = 0;
    cudaMemcpyFromSymbol(&seen, g_seen_max, sizeof(int));
    printf("  %d clusters (%d blocks): at most %d blocks resident at once (%s)\n", clusters,
           2 * clusters, seen, cudaGetErrorString(e));
  }
  return 0;
}
