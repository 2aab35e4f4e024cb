// runtime-check: the runtime's everyday entry points a program reaches
// besides allocations, copies and launches (docs/runtime-api.md): the
// profiler switches, the occupancy calculators, host functions and stream
// callbacks in stream order.  One line per fact on stdout, the same natively
// and through Tandem on one device (occupancy values depend on the kernel's
// compiled registers, so they differ between the GPU and the sim backend,
// whose calculator assumes 32 registers a thread).  Exit status 0 when every
// call that must succeed did.
//
// The kernel is increment_loop's (same name and signature), so the sim
// backend runs it with that program's twin.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "runtime-check: %s failed at %s:%d: %s\n", #call,          \
                    __FILE__, __LINE__, cudaGetErrorName(err_));                       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void increment(unsigned int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1u + (unsigned int)(i % 7);
}

static void not_a_kernel(void) {}

static void profiler(void)
{
    printf("cudaProfilerStart: %s\n", cudaGetErrorName(cudaProfilerStart()));
    printf("cudaProfilerStop: %s\n", cudaGetErrorName(cudaProfilerStop()));
}

static void occupancy(void)
{
    static const int sizes[] = { 32, 128, 256, 512, 1024, 2048 };
    int blocks = -1, min_grid = 0, block = 0;
    size_t smem = 0;

    for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, increment, sizes[i], 0));
        printf("max active blocks, %d threads: %d\n", sizes[i], blocks);
    }
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, increment, 256, 40 << 10));
    printf("max active blocks, 256 threads, 40 KiB dynamic shared: %d\n", blocks);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, increment, 256, 0,
                                                                 cudaOccupancyDisableCachingOverride));
    printf("max active blocks, 256 threads, caching override disabled: %d\n", blocks);
    CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, increment, 1, 256));
    printf("available dynamic shared, 1 block of 256: %zu\n", smem);
    CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, increment, 16, 128));
    printf("available dynamic shared, 16 blocks of 128: %zu\n", smem);
    CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, increment, 0, 0));
    printf("max potential block size: %d (min grid %d)\n", block, min_grid);

    printf("block size 0: %s\n",
           cudaGetErrorName(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, increment, 0, 0)));
    printf("unknown flags: %s\n",
           cudaGetErrorName(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, increment, 256, 0, 6)));
    printf("not a kernel: %s\n",
           cudaGetErrorName(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)not_a_kernel, 256, 0)));
    printf("NULL result: %s\n",
           cudaGetErrorName(cudaOccupancyMaxActiveBlocksPerMultiprocessor(NULL, increment, 256, 0)));
    cudaGetLastError();
}

struct host_log {
    unsigned int *host;     // pinned, the stream's copies land here
    int n;
    unsigned int seen_sum;  // what the first host function saw
    int order[4];
    int count;
    cudaError_t status;
};

static void CUDART_CB sum_what_the_copy_left(void *p)
{
    host_log *l = (host_log *)p;
    unsigned int s = 0;
    for (int i = 0; i < l->n; i++)
        s += l->host[i];
    l->seen_sum = s;
    // Later work of the stream uploads this: it must wait for us.
    for (int i = 0; i < l->n; i++)
        l->host[i] = 1000u;
    l->order[l->count++] = 1;
}

static void CUDART_CB second(void *p)
{
    host_log *l = (host_log *)p;
    l->order[l->count++] = 2;
}

static void CUDART_CB callback(cudaStream_t, cudaError_t status, void *p)
{
    host_log *l = (host_log *)p;
    l->status = status;
    l->order[l->count++] = 3;
}

static void callbacks(void)
{
    const int n = 1 << 16;
    host_log l = {};
    unsigned int *d, sum = 0, want = 0;
    cudaStream_t s;

    l.n = n;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMallocHost(&l.host, n * sizeof(unsigned int)));
    CHECK(cudaMalloc(&d, n * sizeof(unsigned int)));
    CHECK(cudaMemsetAsync(d, 0, n * sizeof(unsigned int), s));
    increment<<<(n + 255) / 256, 256, 0, s>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(l.host, d, n * sizeof(unsigned int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, sum_what_the_copy_left, &l));
    CHECK(cudaLaunchHostFunc(s, second, &l));
    CHECK(cudaMemcpyAsync(d, l.host, n * sizeof(unsigned int), cudaMemcpyHostToDevice, s));
    increment<<<(n + 255) / 256, 256, 0, s>>>(d, n);
    CHECK(cudaStreamAddCallback(s, callback, &l, 0));
    CHECK(cudaMemcpyAsync(l.host, d, n * sizeof(unsigned int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++) {
        want += 1u + (unsigned int)(i % 7);
        sum += l.host[i];
    }
    printf("host function saw the copy before it: %s\n", l.seen_sum == want ? "yes" : "no");
    printf("later work saw the host function's writes: %s\n", sum == (unsigned int)n * 1000u + want ? "yes" : "no");
    printf("order: %d %d %d (%d calls)\n", l.order[0], l.order[1], l.order[2], l.count);
    printf("callback status: %s\n", cudaGetErrorName(l.status));

    l.count = 0;
    CHECK(cudaLaunchHostFunc(0, second, &l));
    CHECK(cudaStreamAddCallback(cudaStreamPerThread, callback, &l, 0));
    CHECK(cudaDeviceSynchronize());
    printf("default streams: %d calls\n", l.count);
    printf("NULL host function: %s\n", cudaGetErrorName(cudaLaunchHostFunc(s, NULL, &l)));
    printf("callback flags 1: %s\n", cudaGetErrorName(cudaStreamAddCallback(s, callback, &l, 1)));
    cudaGetLastError();
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(l.host));
    CHECK(cudaStreamDestroy(s));
}

static void streams(void)
{
    static const int asked[] = { -10, -3, 0, 5 };
    int least = 1, greatest = 1, prio = 1, dev = -1;
    unsigned long long id[2] = { 0, 0 }, again = 0;
    cudaStream_t s[4];

    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("stream priorities: least %d, greatest %d\n", least, greatest);
    CHECK(cudaDeviceGetStreamPriorityRange(NULL, &greatest));
    for (int i = 0; i < 4; i++) {
        CHECK(cudaStreamCreateWithPriority(&s[i], cudaStreamNonBlocking, asked[i]));
        CHECK(cudaStreamGetPriority(s[i], &prio));
        printf("asked priority %d: got %d\n", asked[i], prio);
    }
    CHECK(cudaStreamGetPriority(0, &prio));
    printf("null stream priority: %d\n", prio);
    CHECK(cudaStreamGetPriority(cudaStreamPerThread, &prio));
    printf("per-thread stream priority: %d\n", prio);
    CHECK(cudaStreamGetId(s[0], &id[0]));
    CHECK(cudaStreamGetId(s[1], &id[1]));
    CHECK(cudaStreamGetId(s[0], &again));
    printf("stream ids distinct: %s, stable: %s\n", id[0] != id[1] ? "yes" : "no", id[0] == again ? "yes" : "no");
    CHECK(cudaStreamGetDevice(s[2], &dev));
    printf("stream device: %d\n", dev);
    CHECK(cudaStreamGetDevice(0, &dev));
    printf("null stream device: %d\n", dev);
    printf("NULL priority: %s\n", cudaGetErrorName(cudaStreamGetPriority(s[0], NULL)));
    printf("NULL id: %s\n", cudaGetErrorName(cudaStreamGetId(s[0], NULL)));
    cudaGetLastError();
    for (int i = 0; i < 4; i++)
        CHECK(cudaStreamDestroy(s[i]));
}

static void limits(void)
{
    size_t v = 0;
    enum cudaFuncCache cache = cudaFuncCachePreferEqual;
    enum cudaSharedMemConfig bank = cudaSharedMemBankSizeEightByte;
    const char *name = NULL;

    CHECK(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    printf("stack size limit: %zu\n", v);
    CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    CHECK(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    printf("stack size limit after setting 4096: %zu\n", v);
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 << 20));
    CHECK(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
    printf("malloc heap limit after setting 64 MiB: %zu\n", v);
    CHECK(cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize));
    printf("persisting L2 limit: %zu\n", v);
    printf("unknown limit: %s\n", cudaGetErrorName(cudaDeviceGetLimit(&v, (enum cudaLimit)99)));
    printf("setting an unknown limit: %s\n", cudaGetErrorName(cudaDeviceSetLimit((enum cudaLimit)99, 1)));
    printf("NULL limit result: %s\n", cudaGetErrorName(cudaDeviceGetLimit(NULL, cudaLimitStackSize)));
    cudaGetLastError();

    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    CHECK(cudaDeviceGetCacheConfig(&cache));
    printf("device cache config: %d\n", (int)cache);
    printf("bad cache config: %s\n", cudaGetErrorName(cudaDeviceSetCacheConfig((enum cudaFuncCache)7)));
    cudaGetLastError();
    // Deprecated, still exported, and still called by older programs.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(cudaDeviceGetSharedMemConfig(&bank));
#pragma GCC diagnostic pop
    printf("shared memory bank size: %d\n", (int)bank);
    CHECK(cudaFuncSetCacheConfig(increment, cudaFuncCachePreferL1));
    printf("kernel cache config set\n");
    CHECK(cudaFuncSetAttribute(increment, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768));
    CHECK(cudaFuncSetAttribute(increment, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
    printf("kernel attributes set\n");
    printf("1 MiB dynamic shared: %s\n", cudaGetErrorName(cudaFuncSetAttribute(
                                              increment, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20)));
    printf("read-only attribute: %s\n",
           cudaGetErrorName(cudaFuncSetAttribute(increment, (enum cudaFuncAttribute)4, 1)));
    printf("attribute of no kernel: %s\n", cudaGetErrorName(cudaFuncSetAttribute(
                                                 (const void *)not_a_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 50)));
    cudaGetLastError();
    CHECK(cudaFuncGetName(&name, (const void *)increment));
    printf("kernel name: %s\n", name);
    printf("name of no kernel: %s\n", cudaGetErrorName(cudaFuncGetName(&name, (const void *)not_a_kernel)));
    cudaGetLastError();
    CHECK(cudaCtxResetPersistingL2Cache());
    printf("persisting L2 reset\n");
}

static void cooperative(void)
{
    int n = 1 << 16, coop = 0, sms = 0, per_sm = 0;
    unsigned int *d, *h = (unsigned int *)malloc(n * sizeof(unsigned int));
    void *args[] = { &d, &n };
    int good = 1;

    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
    printf("cooperativeLaunch attribute: %d\n", coop);
    CHECK(cudaMalloc(&d, n * sizeof(unsigned int)));
    CHECK(cudaMemset(d, 0, n * sizeof(unsigned int)));
    CHECK(cudaLaunchCooperativeKernel((const void *)increment, dim3((n + 255) / 256), dim3(256), args, 0, 0));
    CHECK(cudaMemcpy(h, d, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        good &= h[i] == 1u + (unsigned int)(i % 7);
    printf("cooperative launch result: %s\n", good ? "correct" : "WRONG");
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, increment, 256, 0));
    printf("one block more than resident: %s\n",
           cudaGetErrorName(cudaLaunchCooperativeKernel((const void *)increment, dim3(per_sm * sms + 1), dim3(256),
                                                        args, 0, 0)));
    cudaGetLastError();
    CHECK(cudaDeviceSynchronize());
    printf("device usable after the refusal: yes\n");
    CHECK(cudaFree(d));
    free(h);
}

static void identity(void)
{
    cudaDeviceProp want;
    char bus[32] = "";
    int dev = -1, can = -1, value = -1;

    memset(&want, 0, sizeof(want));
    want.major = 9;
    CHECK(cudaChooseDevice(&dev, &want));
    printf("chosen device: %d\n", dev);
    CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
    printf("PCI bus id: %s\n", bus);
    dev = -1;
    CHECK(cudaDeviceGetByPCIBusId(&dev, bus));
    printf("device of that bus id: %d\n", dev);
    printf("device of another bus id: %s\n", cudaGetErrorName(cudaDeviceGetByPCIBusId(&dev, "00ff:ff:1f.0")));
    printf("PCI bus id of device 1: %s\n", cudaGetErrorName(cudaDeviceGetPCIBusId(bus, sizeof(bus), 1)));
    cudaGetLastError();
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 0));
    printf("device 0 can access itself as a peer: %d\n", can);
    printf("peer device 1: %s\n", cudaGetErrorName(cudaDeviceCanAccessPeer(&can, 0, 1)));
    printf("P2P attribute 0 to 0: %s\n",
           cudaGetErrorName(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 0, 0)));
    printf("enable peer access to 0: %s\n", cudaGetErrorName(cudaDeviceEnablePeerAccess(0, 0)));
    printf("enable peer access to 1: %s\n", cudaGetErrorName(cudaDeviceEnablePeerAccess(1, 0)));
    printf("disable peer access to 0: %s\n", cudaGetErrorName(cudaDeviceDisablePeerAccess(0)));
    cudaGetLastError();
    printf("flush GPUDirect RDMA writes: %s\n", cudaGetErrorName(cudaDeviceFlushGPUDirectRDMAWrites(
                                                  cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                                  cudaFlushGPUDirectRDMAWritesToOwner)));
    printf("flush with a bad scope: %s\n", cudaGetErrorName(cudaDeviceFlushGPUDirectRDMAWrites(
                                              cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                              (enum cudaFlushGPUDirectRDMAWritesScope)7)));
    cudaGetLastError();
}

int main()
{
    profiler();
    occupancy();
    callbacks();
    streams();
    limits();
    cooperative();
    identity();
    return 0;
}
