// Managed and mapped memory as the cuda-samples use them (docs/memory-models.md),
// each pattern written anew:
//  - atomics: the host fills a managed array, a kernel updates it with
//    system-scope atomics while the host adds its own, the host reads after
//    synchronizing (systemWideAtomics);
//  - attachment: arrays allocated with cudaMemAttachHost, written by the
//    host, attached to a stream for a kernel and back to the host, prefetched
//    (UnifiedMemoryPerf);
//  - a managed bool that a kernel of a captured graph sets and the host
//    reads and resets between launches (graphMemoryNodes);
//  - copies and memsets naming managed memory;
//  - zero-copy vector addition on cudaHostAllocMapped memory (simpleZeroCopy).
// The output is deterministic and the same natively and through Tandem.
// With the argument "segv" it touches managed memory, then faults on an
// address that is not managed: it must die of SIGSEGV like any program.
// With "latch", a kernel spins on a flag in pinned memory, passed by its
// host pointer, until the host sets it (UnifiedMemoryPerf's latch): that
// needs memory the host and a running kernel share, so through Tandem it
// works over shm only.
// Diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "managed_memory_patterns: %s failed at %s:%d: %s (%s)\n",  \
                    #call, __FILE__, __LINE__, cudaGetErrorString(err_),               \
                    cudaGetErrorName(err_));                                           \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void mm_atomics(int *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd_system(&a[0], 1);
        atomicMax_system(&a[1], i);
    }
}

__global__ void mm_multiply(const unsigned int *a, const unsigned int *b, unsigned int *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] * b[i] + 1u;
}

// Sets *bad when c is not what mm_multiply makes of a[i] = i + 1, b[i] = 2i + 1.
__global__ void mm_check(const unsigned int *c, int n, bool *bad)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && c[i] != (unsigned int)(i + 1) * (unsigned int)(2 * i + 1) + 1u)
        *bad = true;
}

__global__ void mm_spin_until_set(volatile unsigned int *latch, unsigned int *seen)
{
    while (*latch == 0u)
        ;
    *seen = *latch;
}

__global__ void mm_vector_add(const unsigned int *a, const unsigned int *b, unsigned int *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

static unsigned long long sum_of(const unsigned int *p, int n)
{
    unsigned long long s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

// Touches managed memory the device wrote, then writes through a wild
// pointer: the fault is not the library's to handle.
static int segv(void)
{
    int *m;
    CHECK(cudaMallocManaged((void **)&m, 4096));
    CHECK(cudaMemset(m, 1, 4096));
    CHECK(cudaDeviceSynchronize());
    printf("managed m[0]=%#x\n", (unsigned)m[0]);
    fflush(stdout);
    // Through a volatile address: the compiler would otherwise see a
    // constant wild pointer and warn (-Warray-bounds) about what is meant.
    volatile uintptr_t addr = 16;
    volatile int *wild = (volatile int *)addr;
    *wild = 1;
    printf("survived a wild write\n");
    return 0;
}

// A kernel waits for the host through pinned memory named by its host
// pointer; work queued behind it runs once the host lets it go.
static int latch(void)
{
    unsigned int *flag, *seen, *m;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMallocHost((void **)&flag, sizeof(unsigned int)));
    CHECK(cudaMallocManaged((void **)&seen, sizeof(unsigned int)));
    CHECK(cudaMallocManaged((void **)&m, 4096));
    *flag = 0u;
    mm_spin_until_set<<<1, 1, 0, s>>>(flag, seen);
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(m, 2, 4096, s));
    *flag = 5u;
    CHECK(cudaStreamSynchronize(s));
    printf("latch: the kernel saw %u, then m[0]=%#x\n", *seen, m[0]);
    CHECK(cudaFree(m));
    CHECK(cudaFree(seen));
    CHECK(cudaFreeHost(flag));
    CHECK(cudaStreamDestroy(s));
    return 0;
}

int main(int argc, char **argv)
{
    const int threads = 256;
    cudaDeviceProp prop;

    if (argc > 1 && strcmp(argv[1], "segv") == 0)
        return segv();
    if (argc > 1 && strcmp(argv[1], "latch") == 0)
        return latch();

    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("managedMemory %d canMapHostMemory %d\n", prop.managedMemory, prop.canMapHostMemory);

    // Atomics: the device's and the host's on the same managed array.
    {
        const int blocks = 64, n = blocks * threads, host_adds = 1000;
        int *at;
        CHECK(cudaMallocManaged((void **)&at, 64 * sizeof(int)));
        for (int i = 0; i < 64; i++)
            at[i] = 0;
        at[7] = 0xff;
        mm_atomics<<<blocks, threads>>>(at, n);
        CHECK(cudaGetLastError());
        for (int k = 0; k < host_adds; k++)
            __atomic_fetch_add(&at[0], 1, __ATOMIC_SEQ_CST);
        CHECK(cudaDeviceSynchronize());
        printf("atomics: count %d (want %d) max %d untouched %d\n", at[0], n + host_adds, at[1], at[7]);
        CHECK(cudaFree(at));
    }

    // Attachment, as a program written for a GPU without concurrent
    // managed access does it, and prefetches.
    const int n = 1 << 18, blocks = (n + threads - 1) / threads;
    const size_t bytes = n * sizeof(unsigned int);
    unsigned int *a, *b, *c;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMallocManaged((void **)&a, bytes, cudaMemAttachHost));
    CHECK(cudaMallocManaged((void **)&b, bytes, cudaMemAttachHost));
    CHECK(cudaMallocManaged((void **)&c, bytes, cudaMemAttachHost));
    for (int i = 0; i < n; i++) {
        a[i] = (unsigned int)i + 1u;
        b[i] = 2u * (unsigned int)i + 1u;
    }
    CHECK(cudaStreamAttachMemAsync(s, a, 0, cudaMemAttachGlobal));
    CHECK(cudaStreamAttachMemAsync(s, b, 0, cudaMemAttachGlobal));
    CHECK(cudaStreamAttachMemAsync(s, c, 0, cudaMemAttachGlobal));
    mm_multiply<<<blocks, threads, 0, s>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamAttachMemAsync(s, a, 0, cudaMemAttachHost));
    CHECK(cudaStreamAttachMemAsync(s, b, 0, cudaMemAttachHost));
    CHECK(cudaStreamAttachMemAsync(s, c, 0, cudaMemAttachHost));
    CHECK(cudaStreamSynchronize(s));
    printf("attached: c[0]=%u c[%d]=%u sum=%llu\n", c[0], n - 1, c[n - 1], sum_of(c, n));

    cudaMemLocation dev0 = { cudaMemLocationTypeDevice, 0 }, host = { cudaMemLocationTypeHost, 0 };
    c[0] = 0u;   // a host write the prefetch to the device carries
    CHECK(cudaStreamAttachMemAsync(s, c, 0, cudaMemAttachGlobal));
    CHECK(cudaMemPrefetchAsync(c, bytes, dev0, 0, s));
    mm_multiply<<<blocks, threads, 0, s>>>(b, a, c, n / 2);   // rewrites the first half only
    CHECK(cudaGetLastError());
    CHECK(cudaMemPrefetchAsync(c, bytes, host, 0, s));
    CHECK(cudaStreamSynchronize(s));
    printf("prefetched: c[0]=%u c[%d]=%u sum=%llu\n", c[0], n - 1, c[n - 1], sum_of(c, n));

    // A managed flag set by a kernel of a captured graph.
    {
        bool *bad;
        cudaStream_t g;
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaMallocManaged((void **)&bad, sizeof(bool)));
        CHECK(cudaStreamCreate(&g));
        CHECK(cudaStreamBeginCapture(g, cudaStreamCaptureModeGlobal));
        mm_check<<<blocks, threads, 0, g>>>(c, n, bad);
        CHECK(cudaStreamEndCapture(g, &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        for (int round = 0; round < 3; round++) {
            if (round == 1)
                c[5] += 1u;   // the host spoils one element...
            if (round == 2)
                c[5] -= 1u;   // ...and mends it
            *bad = false;
            CHECK(cudaGraphLaunch(exec, g));
            CHECK(cudaStreamSynchronize(g));
            printf("graph round %d: bad %d\n", round, (int)*bad);
        }
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
        CHECK(cudaStreamDestroy(g));
        CHECK(cudaFree(bad));
    }

    // Copies and memsets that name managed memory.
    {
        unsigned int *d, *h = (unsigned int *)malloc(bytes);
        CHECK(cudaMalloc((void **)&d, bytes));
        CHECK(cudaMemcpy(d, c, bytes, cudaMemcpyDefault));
        CHECK(cudaMemset(c, 0, bytes / 2));
        printf("memset: c[0]=%u c[%d]=%u sum=%llu\n", c[0], n / 2, c[n / 2], sum_of(c, n));
        CHECK(cudaMemcpy(c, d, bytes / 4, cudaMemcpyDefault));
        CHECK(cudaMemcpy(h, c, bytes, cudaMemcpyDeviceToHost));
        printf("copied: c[1]=%u sum=%llu, host copy sum=%llu\n", c[1], sum_of(c, n), sum_of(h, n));
        CHECK(cudaMemcpy(c, h + 1, sizeof(unsigned int), cudaMemcpyHostToDevice));
        printf("one element: c[0]=%u\n", c[0]);
        CHECK(cudaFree(d));
        free(h);
    }
    // Refused as CUDA refuses them.
    printf("attach single to the legacy stream: %s\n",
           cudaGetErrorName(cudaStreamAttachMemAsync(0, c, 0, cudaMemAttachSingle)));
    printf("free inside an allocation: %s\n", cudaGetErrorName(cudaFree(c + 1)));
    cudaGetLastError();
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaStreamDestroy(s));

    // Zero-copy vector addition.
    {
        unsigned int *ha, *hb, *hc, *da, *db, *dc;
        CHECK(cudaHostAlloc((void **)&ha, bytes, cudaHostAllocMapped));
        CHECK(cudaHostAlloc((void **)&hb, bytes, cudaHostAllocMapped));
        CHECK(cudaHostAlloc((void **)&hc, bytes, cudaHostAllocMapped));
        for (int i = 0; i < n; i++) {
            ha[i] = (unsigned int)i;
            hb[i] = 3u * (unsigned int)i;
        }
        CHECK(cudaHostGetDevicePointer((void **)&da, ha, 0));
        CHECK(cudaHostGetDevicePointer((void **)&db, hb, 0));
        CHECK(cudaHostGetDevicePointer((void **)&dc, hc, 0));
        for (int round = 0; round < 2; round++) {
            mm_vector_add<<<blocks, threads>>>(da, db, dc, n);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            int wrong = 0;
            for (int i = 1; i < n; i++)
                wrong += hc[i] != 4u * (unsigned int)i;
            printf("zero-copy round %d: hc[0]=%u wrong %d sum=%llu\n", round, hc[0], wrong, sum_of(hc, n));
            ha[0] = 100u;   // seen by the next round's kernel
        }
        CHECK(cudaFreeHost(ha));
        CHECK(cudaFreeHost(hb));
        CHECK(cudaFreeHost(hc));
    }
    return 0;
}
