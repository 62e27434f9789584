// SPDX-License-Identifier: Apache-2.0
//
// Plain CUDA driver API latencies of the small operations an OpenMP program
// does most: an empty kernel launched and waited for, and 64-byte copies.
// They are the floor under the plugin's own figures (memcpy-bench's empty
// target region and 64-byte omp_target_memcpy), measured in the same run.
// libcuda.so.1 is dlopened, as the plugin does; the kernel is inline PTX.
// Usage: cuda-latency [ITERATIONS] [auto|spin|yield|blocking]
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char EmptyPTX[] = ".version 7.0\n"
                               ".target sm_50\n"
                               ".address_size 64\n"
                               ".visible .entry empty()\n"
                               "{\n"
                               "  ret;\n"
                               "}\n"
                               ".visible .entry empty1(.param .u64 p)\n"
                               "{\n"
                               "  ret;\n"
                               "}\n";

#define API(X)                                                                 \
  X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxSetFlags_v2)                    \
  X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuModuleLoadData)           \
  X(cuModuleGetFunction) X(cuStreamCreate) X(cuLaunchKernel)                   \
  X(cuStreamSynchronize) X(cuStreamQuery) X(cuMemAlloc_v2)                     \
  X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemHostAlloc)            \
  X(cuGetErrorString) X(cuStreamWriteValue32_v2)                              \
  X(cuMemHostGetDevicePointer_v2) X(cuEventCreate) X(cuEventRecord)            \
  X(cuEventQuery) X(cuStreamBeginCapture_v2) X(cuStreamEndCapture)           \
  X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphGetNodes)           \
  X(cuGraphExecKernelNodeSetParams_v2) X(cuGraphKernelNodeGetParams_v2)

#define DECLARE(Name) static __typeof__(&Name) p_##Name;
API(DECLARE)

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

static void check(CUresult R, const char *Call) {
  if (R == CUDA_SUCCESS)
    return;
  const char *Msg = "?";
  if (p_cuGetErrorString)
    p_cuGetErrorString(R, &Msg);
  fprintf(stderr, "cuda-latency: %s failed: %s (%d)\n", Call, Msg, (int)R);
  exit(1);
}

static CUstream Stream;
static CUfunction Empty;
static CUdeviceptr Dev;
static void *Pageable, *Pinned;

static void waitSync(void) {
  check(p_cuStreamSynchronize(Stream), "cuStreamSynchronize");
}

static void waitSpin(void) {
  CUresult R;
  while ((R = p_cuStreamQuery(Stream)) == CUDA_ERROR_NOT_READY)
    ;
  check(R, "cuStreamQuery");
}

static CUfunction Empty1;
static CUstream PerThread = CU_STREAM_PER_THREAD;
static void launchPerThread(void) {
  check(p_cuLaunchKernel(Empty, 1, 1, 1, 1, 1, 1, 0, PerThread, NULL, NULL),
        "cuLaunchKernel");
}
static void waitPerThread(void) {
  CUresult R;
  while ((R = p_cuStreamQuery(PerThread)) == CUDA_ERROR_NOT_READY)
    ;
  check(R, "cuStreamQuery");
}

static void launch(unsigned Threads) {
  check(p_cuLaunchKernel(Empty, 1, 1, 1, Threads, 1, 1, 0, Stream, NULL, NULL),
        "cuLaunchKernel");
}

/// Mean microseconds of Op then Wait, over N rounds after N/10 warm-up ones.
static double measure(int N, void (*Op)(void), void (*Wait)(void)) {
  for (int I = 0; I < N / 10; ++I) {
    Op();
    Wait();
  }
  double T0 = now();
  for (int I = 0; I < N; ++I) {
    Op();
    Wait();
  }
  return (now() - T0) / N * 1e6;
}

/// Completion seen in host memory: the stream writes a counter after the
/// work, and the host spins on plain loads (no driver call per poll).
static volatile unsigned *Flag;
static CUdeviceptr FlagDev;
static unsigned FlagValue;
static CUevent Event;

static void writeFlag(void) {
  check(p_cuStreamWriteValue32_v2(Stream, FlagDev, ++FlagValue, 0),
        "cuStreamWriteValue32");
}
static void waitFlag(void) {
  writeFlag();
  while (*Flag != FlagValue)
    ;
}
static void waitEvent(void) {
  check(p_cuEventRecord(Event, Stream), "cuEventRecord");
  CUresult R;
  while ((R = p_cuEventQuery(Event)) == CUDA_ERROR_NOT_READY)
    ;
  check(R, "cuEventQuery");
}

static void launch1(void) { launch(1); }

/// A one-kernel graph, captured once and replayed: what a launch cache
/// keyed on the kernel and its arguments would do.
static CUgraphExec Graph, Graph1;
static CUgraphNode Node1;
static CUDA_KERNEL_NODE_PARAMS Params1;
static CUdeviceptr Arg1;
static void *ArgPtrs1[] = {&Arg1};
static void graphLaunch(void) {
  check(p_cuGraphLaunch(Graph, Stream), "cuGraphLaunch");
}
static void launchArg(void) {
  ++Arg1;
  check(p_cuLaunchKernel(Empty1, 1, 1, 1, 160, 1, 1, 0, Stream, ArgPtrs1, NULL),
        "cuLaunchKernel");
}
static void graphSetAndLaunch(void) {
  ++Arg1;
  Params1.kernelParams = ArgPtrs1;
  check(p_cuGraphExecKernelNodeSetParams_v2(Graph1, Node1, &Params1),
        "cuGraphExecKernelNodeSetParams");
  check(p_cuGraphLaunch(Graph1, Stream), "cuGraphLaunch");
}
static CUgraphExec capture(CUfunction F, unsigned Threads, void **Args,
                           CUgraphNode *NodeOut) {
  CUgraph G;
  CUgraphExec E;
  check(p_cuStreamBeginCapture_v2(Stream, CU_STREAM_CAPTURE_MODE_RELAXED),
        "cuStreamBeginCapture");
  check(p_cuLaunchKernel(F, 1, 1, 1, Threads, 1, 1, 0, Stream, Args, NULL),
        "cuLaunchKernel (capture)");
  check(p_cuStreamEndCapture(Stream, &G), "cuStreamEndCapture");
  check(p_cuGraphInstantiateWithFlags(&E, G, 0), "cuGraphInstantiate");
  if (NodeOut) {
    size_t N = 1;
    check(p_cuGraphGetNodes(G, NodeOut, &N), "cuGraphGetNodes");
  }
  return E;
}
static void launch160(void) { launch(160); }
static void h2dPageable(void) {
  check(p_cuMemcpyHtoDAsync_v2(Dev, Pageable, 64, Stream), "cuMemcpyHtoDAsync");
}
static void d2hPageable(void) {
  check(p_cuMemcpyDtoHAsync_v2(Pageable, Dev, 64, Stream), "cuMemcpyDtoHAsync");
}
static void h2dPinned(void) {
  check(p_cuMemcpyHtoDAsync_v2(Dev, Pinned, 64, Stream), "cuMemcpyHtoDAsync");
}
static void d2hPinned(void) {
  check(p_cuMemcpyDtoHAsync_v2(Pinned, Dev, 64, Stream), "cuMemcpyDtoHAsync");
}
static void nothing(void) {}
static CUcontext Context;
static void setCurrent(void) {
  check(p_cuCtxSetCurrent(Context), "cuCtxSetCurrent");
}
static void query(void) { (void)p_cuStreamQuery(Stream); }
static void readClock(void) { (void)now(); }

int main(int Argc, char **Argv) {
  int N = Argc > 1 ? atoi(Argv[1]) : 100000;
  const char *Mode = Argc > 2 ? Argv[2] : "auto";
  unsigned Flags = CU_CTX_SCHED_AUTO;
  if (!strcmp(Mode, "spin"))
    Flags = CU_CTX_SCHED_SPIN;
  else if (!strcmp(Mode, "yield"))
    Flags = CU_CTX_SCHED_YIELD;
  else if (!strcmp(Mode, "blocking"))
    Flags = CU_CTX_SCHED_BLOCKING_SYNC;
  else if (strcmp(Mode, "auto")) {
    fprintf(stderr, "usage: %s [ITERATIONS] [auto|spin|yield|blocking]\n",
            Argv[0]);
    return 2;
  }

  void *Lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!Lib) {
    fprintf(stderr, "cuda-latency: %s\n", dlerror());
    return 1;
  }
#define LOAD(Name)                                                             \
  p_##Name = (__typeof__(p_##Name))dlsym(Lib, #Name);                          \
  if (!p_##Name) {                                                             \
    fprintf(stderr, "cuda-latency: libcuda.so.1 has no %s\n", #Name);          \
    return 1;                                                                  \
  }
  API(LOAD)

  CUdevice Device;
  CUmodule Module;
  check(p_cuInit(0), "cuInit");
  check(p_cuDeviceGet(&Device, 0), "cuDeviceGet");
  check(p_cuDevicePrimaryCtxSetFlags_v2(Device, Flags),
        "cuDevicePrimaryCtxSetFlags");
  check(p_cuDevicePrimaryCtxRetain(&Context, Device), "cuDevicePrimaryCtxRetain");
  check(p_cuCtxSetCurrent(Context), "cuCtxSetCurrent");
  check(p_cuModuleLoadData(&Module, EmptyPTX), "cuModuleLoadData");
  check(p_cuModuleGetFunction(&Empty, Module, "empty"), "cuModuleGetFunction");
  check(p_cuModuleGetFunction(&Empty1, Module, "empty1"), "cuModuleGetFunction");
  check(p_cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  Graph = capture(Empty, 160, NULL, NULL);
  Graph1 = capture(Empty1, 160, ArgPtrs1, &Node1);
  check(p_cuGraphKernelNodeGetParams_v2(Node1, &Params1),
        "cuGraphKernelNodeGetParams");
  check(p_cuMemAlloc_v2(&Dev, 64), "cuMemAlloc");
  check(p_cuMemHostAlloc(&Pinned, 64, 0), "cuMemHostAlloc");
  check(p_cuMemHostAlloc((void **)&Flag, 64, CU_MEMHOSTALLOC_DEVICEMAP),
        "cuMemHostAlloc");
  check(p_cuMemHostGetDevicePointer_v2(&FlagDev, (void *)Flag, 0),
        "cuMemHostGetDevicePointer");
  check(p_cuEventCreate(&Event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  Pageable = malloc(64);
  memset(Pageable, 1, 64);

  printf("plain CUDA driver latencies, context scheduling %s, mean of %d\n",
         Mode, N);
  printf("  clock_gettime(CLOCK_MONOTONIC)           %7.3f us\n",
         measure(N, readClock, nothing));
  printf("  cuCtxSetCurrent                          %7.3f us\n",
         measure(N, setCurrent, nothing));
  printf("  cuStreamQuery (idle stream)              %7.3f us\n",
         measure(N, query, nothing));
  printf("  empty kernel, 1 thread, + synchronize    %7.3f us\n",
         measure(N, launch1, waitSync));
  printf("  empty kernel, 1 thread, + query spin     %7.3f us\n",
         measure(N, launch1, waitSpin));
  printf("  empty kernel, 160 threads, + query spin  %7.3f us\n",
         measure(N, launch160, waitSpin));
  printf("  empty kernel, 1 thread, + event spin     %7.3f us\n",
         measure(N, launch1, waitEvent));
  printf("  empty kernel, 1 thread, + host flag      %7.3f us\n",
         measure(N, launch1, waitFlag));
  printf("  stream write to host flag alone          %7.3f us\n",
         measure(N, nothing, waitFlag));
  printf("  empty kernel, per-thread stream, spin    %7.3f us\n",
         measure(N, launchPerThread, waitPerThread));
  printf("  kernel with 1 argument, + query spin     %7.3f us\n",
         measure(N, launchArg, waitSpin));
  printf("  graph of 1 empty kernel, + query spin    %7.3f us\n",
         measure(N, graphLaunch, waitSpin));
  printf("  graph of 1 empty kernel, + host flag     %7.3f us\n",
         measure(N, graphLaunch, waitFlag));
  printf("  graph, new argument set, + query spin    %7.3f us\n",
         measure(N, graphSetAndLaunch, waitSpin));
  double T0 = now();
  for (int I = 0; I < N; ++I)
    graphLaunch();
  double PerGraph = (now() - T0) / N * 1e6;
  waitSync();
  printf("  cuGraphLaunch alone (back to back)       %7.3f us\n", PerGraph);
  T0 = now();
  for (int I = 0; I < N; ++I)
    launch1();
  double PerLaunch = (now() - T0) / N * 1e6;
  waitSync();
  printf("  cuLaunchKernel alone (back to back)      %7.3f us\n", PerLaunch);
  printf("  64-byte H2D pageable + host flag         %7.3f us\n",
         measure(N, h2dPageable, waitFlag));
  printf("  64-byte D2H pageable + host flag         %7.3f us\n",
         measure(N, d2hPageable, waitFlag));
  printf("  64-byte H2D pageable + synchronize       %7.3f us\n",
         measure(N, h2dPageable, waitSync));
  printf("  64-byte H2D pageable + query spin        %7.3f us\n",
         measure(N, h2dPageable, waitSpin));
  printf("  64-byte D2H pageable + query spin        %7.3f us\n",
         measure(N, d2hPageable, waitSpin));
  printf("  64-byte H2D pinned + query spin          %7.3f us\n",
         measure(N, h2dPinned, waitSpin));
  printf("  64-byte D2H pinned + query spin          %7.3f us\n",
         measure(N, d2hPinned, waitSpin));
  return 0;
}
