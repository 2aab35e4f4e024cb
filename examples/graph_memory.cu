// Graph memory (docs/graphs.md, "Graph memory"): allocation and free nodes
// around kernels, launched several times; the virtual address a graph reuses
// along a path; an allocation a launch leaves for the program to free (with
// cudaFree, cudaFreeAsync, another graph's free node, or on relaunch with
// cudaGraphInstantiateFlagAutoFreeOnLaunch); cudaMallocAsync/cudaFreeAsync
// captured into a graph; the footprint attributes around cudaDeviceGraphMemTrim;
// the same nodes through cudaGraphAddNode and cudaGraph(Exec)NodeSetParams;
// graphs running together in several streams, whose footprints add up (as
// graphMemoryFootprint's simultaneous streams).
// Every line it prints is the same natively and through Tandem (footprints
// are printed as comparisons: the driver rounds them its own way).  The
// kernels are mem_pools.cu's, so the sim backend's twins serve both, and
// gmem_spin (its twin: server/sim_kernels/graph_memory.c).
// Usage: graph_memory [launches]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "pool_kernels.cuh"
#include "spin_ms.cuh"

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "graph_memory: %s failed at %s:%d: %s (%s)\n", #call,      \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const int N = 1 << 20, THREADS = 256;
static const size_t BYTES = (size_t)N * sizeof(unsigned int);

__global__ void gmem_spin(unsigned int ms)
{
    spin_ms(ms);
}

static uint64_t footprint(cudaGraphMemAttributeType attr)
{
    uint64_t v = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, attr, &v));
    return v;
}

static uint64_t sum_of(const unsigned int *d, unsigned int *host)
{
    uint64_t sum = 0;
    CHECK(cudaMemcpy(host, d, BYTES, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        sum += host[i];
    return sum;
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps, void *func, void **args)
{
    cudaKernelNodeParams p = {};
    cudaGraphNode_t node;

    p.func = func;
    p.gridDim = dim3((N + THREADS - 1) / THREADS);
    p.blockDim = dim3(THREADS);
    p.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&node, g, deps, ndeps, &p));
    return node;
}

static cudaMemAllocNodeParams alloc_params(size_t bytes)
{
    cudaMemAllocNodeParams p = {};

    p.bytesize = bytes;
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    return p;
}

// alloc a -> fill a -> twice a into out -> free a -> alloc b -> fill b -> free b
static cudaGraph_t alloc_free_graph(unsigned int *out, unsigned int **a_out, unsigned int **b_out,
                                    cudaGraphNode_t *alloc_node, cudaGraphNode_t *free_node)
{
    cudaGraph_t g;
    cudaMemAllocNodeParams p = alloc_params(BYTES);
    cudaGraphNode_t fill, twice, alloc_b, fill_b, free_b;
    int n = N;
    unsigned int seven = 7u, nine = 9u;

    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemAllocNode(alloc_node, g, NULL, 0, &p));
    unsigned int *a = (unsigned int *)p.dptr;
    void *fill_args[] = { &a, &n, &seven };
    fill = add_kernel(g, alloc_node, 1, (void *)pool_fill, fill_args);
    void *twice_args[] = { &a, &out, &n };
    twice = add_kernel(g, &fill, 1, (void *)pool_twice, twice_args);
    CHECK(cudaGraphAddMemFreeNode(free_node, g, &twice, 1, a));
    p = alloc_params(BYTES);
    CHECK(cudaGraphAddMemAllocNode(&alloc_b, g, free_node, 1, &p));
    unsigned int *b = (unsigned int *)p.dptr;
    void *fill_b_args[] = { &b, &n, &nine };
    fill_b = add_kernel(g, &alloc_b, 1, (void *)pool_fill, fill_b_args);
    CHECK(cudaGraphAddMemFreeNode(&free_b, g, &fill_b, 1, b));
    *a_out = a;
    *b_out = b;
    return g;
}

// alloc c -> fill c with v (no free: the launch leaves c allocated)
static cudaGraph_t alloc_only_graph(unsigned int v, unsigned int **c_out)
{
    static unsigned int value;
    cudaGraph_t g;
    cudaMemAllocNodeParams p = alloc_params(BYTES);
    cudaGraphNode_t alloc;
    int n = N;

    value = v;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &p));
    *c_out = (unsigned int *)p.dptr;
    void *args[] = { c_out, &n, &value };
    add_kernel(g, &alloc, 1, (void *)pool_fill, args);
    return g;
}

static void explicit_nodes(cudaStream_t s, int launches, unsigned int *out, unsigned int *host)
{
    unsigned int *a, *b;
    cudaGraphNode_t alloc_node, free_node;
    cudaGraph_t g = alloc_free_graph(out, &a, &b, &alloc_node, &free_node);
    cudaGraphExec_t x;

    printf("a second allocation after the first one's free reuses its address: %s\n", a == b ? "yes" : "no");
    cudaMemAllocNodeParams got;
    void *freed = NULL;
    CHECK(cudaGraphMemAllocNodeGetParams(alloc_node, &got));
    CHECK(cudaGraphMemFreeNodeGetParams(free_node, &freed));
    printf("alloc node params: bytesize %zu, dptr is the node's: %s; free node frees it: %s\n", got.bytesize,
           got.dptr == (void *)a ? "yes" : "no", freed == (void *)a ? "yes" : "no");
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(alloc_node, &type));
    printf("node types: alloc %d", (int)type);
    CHECK(cudaGraphNodeGetType(free_node, &type));
    printf(", free %d\n", (int)type);

    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphDestroy(g));          // the exec keeps its allocations
    printf("footprint before the first launch: %llu\n",
           (unsigned long long)footprint(cudaGraphMemAttrUsedMemCurrent));
    for (int r = 0; r < launches; r++) {
        CHECK(cudaMemsetAsync(out, 0, BYTES, s));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        printf("launch %d: sum %llu\n", r, (unsigned long long)sum_of(out, host));
    }
    printf("footprint after launches holds an allocation: %s\n",
           footprint(cudaGraphMemAttrUsedMemCurrent) >= BYTES ? "yes" : "no");
    CHECK(cudaDeviceGraphMemTrim(0));
    printf("footprint after trim: %llu\n", (unsigned long long)footprint(cudaGraphMemAttrUsedMemCurrent));
    CHECK(cudaGraphExecDestroy(x));
}

static void unfreed(cudaStream_t s, unsigned int *host)
{
    unsigned int *c;
    cudaGraph_t g = alloc_only_graph(5u, &c), gfree;
    cudaGraphExec_t x, xfree;
    cudaGraphNode_t free_node;

    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    printf("unfreed: the program reads it after the launch: sum %llu\n", (unsigned long long)sum_of(c, host));
    CHECK(cudaDeviceGraphMemTrim(0));
    printf("unfreed: trim keeps it: %s\n", footprint(cudaGraphMemAttrUsedMemCurrent) >= BYTES ? "yes" : "no");
    CHECK(cudaFree(c));
    CHECK(cudaDeviceGraphMemTrim(0));
    printf("unfreed: after cudaFree and trim: %llu\n", (unsigned long long)footprint(cudaGraphMemAttrUsedMemCurrent));

    // Launched again, the same address; freed on a stream this time.
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaFreeAsync(c, s));
    CHECK(cudaStreamSynchronize(s));
    printf("unfreed: relaunch then cudaFreeAsync: ok\n");

    // Freed by another graph's free node.
    CHECK(cudaGraphCreate(&gfree, 0));
    CHECK(cudaGraphAddMemFreeNode(&free_node, gfree, NULL, 0, c));
    CHECK(cudaGraphInstantiate(&xfree, gfree, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaGraphLaunch(xfree, s));
    CHECK(cudaStreamSynchronize(s));
    printf("unfreed: freed by another graph: ok\n");
    CHECK(cudaGraphExecDestroy(xfree));
    CHECK(cudaGraphDestroy(gfree));
    CHECK(cudaGraphExecDestroy(x));

    // Instantiated to free on launch: relaunching needs no free in between.
    CHECK(cudaGraphInstantiate(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    for (int r = 0; r < 3; r++)
        CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    printf("auto free on launch: three launches, sum %llu\n", (unsigned long long)sum_of(c, host));
    CHECK(cudaFree(c));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
}

static void captured(cudaStream_t s, int launches, unsigned int *out, unsigned int *host)
{
    unsigned int *d, *kept;
    cudaGraph_t g;
    cudaGraphExec_t x;
    const int blocks = (N + THREADS - 1) / THREADS;

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMallocAsync((void **)&d, BYTES, s));
    CHECK(cudaMallocAsync((void **)&kept, BYTES, s));
    pool_fill<<<blocks, THREADS, 0, s>>>(d, N, 11u);
    pool_twice<<<blocks, THREADS, 0, s>>>(d, out, N);
    pool_twice<<<blocks, THREADS, 0, s>>>(d, kept, N);
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    for (int r = 0; r < launches; r++) {
        CHECK(cudaMemsetAsync(out, 0, BYTES, s));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        printf("captured launch %d: sum %llu, kept sum %llu\n", r, (unsigned long long)sum_of(out, host),
               (unsigned long long)sum_of(kept, host));
        CHECK(cudaFreeAsync(kept, s));   // the launch left it allocated
    }
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));

    // Allocated on the origin, freed on a forked stream that joined the
    // capture through an event, which the origin waits for again.
    cudaStream_t fork;
    cudaEvent_t forked, joined;
    CHECK(cudaStreamCreateWithFlags(&fork, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMallocAsync((void **)&d, BYTES, s));
    pool_fill<<<blocks, THREADS, 0, s>>>(d, N, 13u);
    CHECK(cudaEventRecord(forked, s));
    CHECK(cudaStreamWaitEvent(fork, forked, 0));
    pool_twice<<<blocks, THREADS, 0, fork>>>(d, out, N);
    CHECK(cudaFreeAsync(d, fork));
    CHECK(cudaEventRecord(joined, fork));
    CHECK(cudaStreamWaitEvent(s, joined, 0));
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    for (int r = 0; r < 2; r++) {
        CHECK(cudaMemsetAsync(out, 0, BYTES, s));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        printf("captured across two streams, launch %d: sum %llu\n", r, (unsigned long long)sum_of(out, host));
    }
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaEventDestroy(forked));
    CHECK(cudaEventDestroy(joined));
    CHECK(cudaStreamDestroy(fork));
    CHECK(cudaDeviceGraphMemTrim(0));
    printf("captured: footprint after trim: %llu\n", (unsigned long long)footprint(cudaGraphMemAttrUsedMemCurrent));
}

static void attributes_and_errors(void)
{
    uint64_t zero = 0, one = 1, v = 0;
    cudaGraph_t g;
    cudaGraphNode_t node;
    cudaMemAllocNodeParams p = alloc_params(0);

    CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
    CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero));
    printf("high marks after reset: used %llu, reserved %llu\n",
           (unsigned long long)footprint(cudaGraphMemAttrUsedMemHigh),
           (unsigned long long)footprint(cudaGraphMemAttrReservedMemHigh));
    printf("set a high mark to 1: %s\n",
           cudaGetErrorName(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &one)));
    printf("set the current footprint: %s\n",
           cudaGetErrorName(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero)));
    printf("attribute of device 7: %s\n",
           cudaGetErrorName(cudaDeviceGetGraphMemAttribute(7, cudaGraphMemAttrUsedMemCurrent, &v)));
    printf("trim device 7: %s\n", cudaGetErrorName(cudaDeviceGraphMemTrim(7)));
    cudaGetLastError();
    CHECK(cudaGraphCreate(&g, 0));
    printf("allocation node of 0 bytes: %s\n", cudaGetErrorName(cudaGraphAddMemAllocNode(&node, g, NULL, 0, &p)));
    cudaGetLastError();
    CHECK(cudaGraphDestroy(g));
}

// The same through the generic calls: cudaGraphAddNode for every node,
// cudaGraphNodeSetParams and cudaGraphExecNodeSetParams for the fill.
static void generic_nodes(cudaStream_t s, unsigned int *out, unsigned int *host)
{
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaGraphNode_t alloc, fill, twice, free_node;
    cudaGraphNodeParams p = {};
    unsigned int *d, v = 4u;
    int n = N;

    CHECK(cudaGraphCreate(&g, 0));
    p.type = cudaGraphNodeTypeMemAlloc;
    p.alloc.bytesize = BYTES;
    p.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    p.alloc.poolProps.location.type = cudaMemLocationTypeDevice;
    CHECK(cudaGraphAddNode(&alloc, g, NULL, NULL, 0, &p));
    d = (unsigned int *)p.alloc.dptr;
    void *fill_args[] = { &d, &n, &v };
    p = {};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = (void *)pool_fill;
    p.kernel.gridDim = dim3((N + THREADS - 1) / THREADS);
    p.kernel.blockDim = dim3(THREADS);
    p.kernel.kernelParams = fill_args;
    CHECK(cudaGraphAddNode(&fill, g, &alloc, NULL, 1, &p));
    void *twice_args[] = { &d, &out, &n };
    cudaGraphNodeParams t = p;
    t.kernel.func = (void *)pool_twice;
    t.kernel.kernelParams = twice_args;
    CHECK(cudaGraphAddNode(&twice, g, &fill, NULL, 1, &t));
    cudaGraphNodeParams f = {};
    f.type = cudaGraphNodeTypeMemFree;
    f.free.dptr = d;
    CHECK(cudaGraphAddNode(&free_node, g, &twice, NULL, 1, &f));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    printf("generic nodes: sum %llu\n", (unsigned long long)sum_of(out, host));
    v = 3u;                              // read when the parameters are set
    CHECK(cudaGraphExecNodeSetParams(x, fill, &p));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    printf("generic nodes, exec's fill set: sum %llu\n", (unsigned long long)sum_of(out, host));
    CHECK(cudaGraphExecDestroy(x));
    v = 2u;
    CHECK(cudaGraphNodeSetParams(fill, &p));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    printf("generic nodes, graph's fill set: sum %llu\n", (unsigned long long)sum_of(out, host));
    p.reserved2 = 1;
    printf("generic node with reserved bytes set: %s\n",
           cudaGetErrorName(cudaGraphAddNode(&fill, g, NULL, NULL, 0, &p)));
    cudaGetLastError();
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaDeviceGraphMemTrim(0));
}

// alloc -> spin -> free, as graphMemoryFootprint's graphs: 64 MiB, as there
// (the driver's footprint grows in its own granules), and a spin long enough
// that the launches of a loop run together even on a loaded machine.
static cudaGraphExec_t alloc_spin_free_exec(void)
{
    enum { SPIN_MS = 300 };
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaMemAllocNodeParams p = alloc_params(64u << 20);
    cudaKernelNodeParams k = {};
    cudaGraphNode_t alloc, spin, free_node;
    unsigned int ms = SPIN_MS;
    void *args[] = { &ms };

    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &p));
    k.func = (void *)gmem_spin;
    k.gridDim = dim3(1);
    k.blockDim = dim3(1);
    k.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&spin, g, &alloc, 1, &k));
    CHECK(cudaGraphAddMemFreeNode(&free_node, g, &spin, 1, p.dptr));
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphDestroy(g));
    return x;
}

// Graphs that may run at the same time need separate memory: launched in
// streams of their own without waiting, each launch grows the footprint.
// Once they have finished, a launch in yet another stream reuses theirs.
static void concurrent_streams(void)
{
    enum { STREAMS = 3 };
    cudaStream_t streams[STREAMS + 1];
    cudaGraphExec_t x[STREAMS + 1];
    uint64_t last = footprint(cudaGraphMemAttrUsedMemCurrent), now;
    bool grows = true;

    for (int i = 0; i <= STREAMS; i++) {
        x[i] = alloc_spin_free_exec();
        CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    }
    for (int i = 0; i < STREAMS; i++) {
        CHECK(cudaGraphLaunch(x[i], streams[i]));
        now = footprint(cudaGraphMemAttrUsedMemCurrent);
        grows = grows && now > last;
        last = now;
    }
    printf("concurrent streams: footprint grows with each launch: %s\n", grows ? "yes" : "no");
    for (int i = 0; i < STREAMS; i++)
        CHECK(cudaStreamSynchronize(streams[i]));
    CHECK(cudaGraphLaunch(x[STREAMS], streams[STREAMS]));
    printf("after the streams finished, a launch reuses their memory: %s\n",
           footprint(cudaGraphMemAttrUsedMemCurrent) <= last ? "yes" : "no");
    for (int i = 0; i <= STREAMS; i++) {
        CHECK(cudaStreamSynchronize(streams[i]));
        CHECK(cudaGraphExecDestroy(x[i]));
        CHECK(cudaStreamDestroy(streams[i]));
    }
    CHECK(cudaDeviceGraphMemTrim(0));
    printf("concurrent streams: footprint after trim: %llu\n",
           (unsigned long long)footprint(cudaGraphMemAttrUsedMemCurrent));
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 3;
    unsigned int *out, *host = (unsigned int *)malloc(BYTES);
    cudaStream_t s;

    if (launches < 1 || !host)
        return 2;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc((void **)&out, BYTES));
    explicit_nodes(s, launches, out, host);
    unfreed(s, host);
    captured(s, launches, out, host);
    generic_nodes(s, out, host);
    concurrent_streams();
    attributes_and_errors();
    CHECK(cudaFree(out));
    CHECK(cudaStreamDestroy(s));
    free(host);
    printf("graph_memory: done\n");
    return 0;
}
