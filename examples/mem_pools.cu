// Stream-ordered allocation and memory pools (docs/memory-models.md): memory
// allocated and freed on a stream around kernels that use it, the default
// and a created pool's attributes, the device's current pool.  Every line it
// prints is the same natively and through Tandem.  Diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "pool_kernels.cuh"

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "mem_pools: %s failed at %s:%d: %s (%s)\n", #call,         \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static uint64_t pool_attr(cudaMemPool_t pool, cudaMemPoolAttr attr)
{
    uint64_t v = 0;
    CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
    return v;
}

int main()
{
    const int n = 1 << 16, threads = 256, blocks = (n + threads - 1) / threads;
    const size_t bytes = (size_t)n * sizeof(unsigned int);
    int supported = 0;
    cudaStream_t s;

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
    printf("memoryPoolsSupported %d\n", supported);
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // a is freed on the stream right after the kernel that reads it; c is
    // allocated next and may reuse a's memory, which is only correct if the
    // free waited for that kernel.
    unsigned int *a, *b, *c, *host = (unsigned int *)malloc(2 * bytes);
    CHECK(cudaMallocAsync((void **)&a, bytes, s));
    CHECK(cudaMallocAsync((void **)&b, bytes, s));
    // Many launches ahead of the free keep the stream busy well past
    // cudaFreeAsync's return: memory released then would fault them.
    for (int k = 0; k < 64; k++)
        pool_fill<<<blocks, threads, 0, s>>>(a, n, 7u);
    pool_twice<<<blocks, threads, 0, s>>>(a, b, n);
    CHECK(cudaFreeAsync(a, s));
    CHECK(cudaMallocAsync((void **)&c, bytes, s));
    pool_fill<<<blocks, threads, 0, s>>>(c, n, 100u);
    CHECK(cudaMemcpyAsync(host, b, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaMemcpyAsync(host + n, c, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(b, s));
    CHECK(cudaFreeAsync(c, s));
    CHECK(cudaStreamSynchronize(s));
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += host[i];
    printf("stream-ordered: b[0]=%u b[%d]=%u sum=%llu c[5]=%u\n", host[0], n - 1, host[n - 1],
           (unsigned long long)sum, host[n + 5]);

    // The default pool is the current one until another is set.
    cudaMemPool_t def, cur, pool;
    CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    printf("default pool is current: %s\n", def == cur ? "yes" : "no");
    uint64_t threshold = 1 << 20;
    CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
    printf("default release threshold %llu\n", (unsigned long long)pool_attr(def, cudaMemPoolAttrReleaseThreshold));
    threshold = 0;
    CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
    int follow = -1;
    CHECK(cudaMemPoolGetAttribute(def, cudaMemPoolReuseFollowEventDependencies, &follow));
    printf("default reuse follows events %d\n", follow);

    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CHECK(cudaMemPoolCreate(&pool, &props));
    int off = 0;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &off));
    int opportunistic = -1;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &opportunistic));
    printf("created pool opportunistic reuse %d\n", opportunistic);

    unsigned int *d;
    CHECK(cudaMallocFromPoolAsync((void **)&d, bytes, pool, s));
    pool_fill<<<blocks, threads, 0, s>>>(d, n, 1u);
    CHECK(cudaMemcpyAsync(host, d, bytes, cudaMemcpyDeviceToHost, s));
    printf("pool in use: used>=size %s reserved>=used %s\n", pool_attr(pool, cudaMemPoolAttrUsedMemCurrent) >= bytes ? "yes" : "no",
           pool_attr(pool, cudaMemPoolAttrReservedMemCurrent) >= pool_attr(pool, cudaMemPoolAttrUsedMemCurrent) ? "yes" : "no");
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    printf("pool after free and trim: used %llu reserved %llu used high>=size %s d[9]=%u\n",
           (unsigned long long)pool_attr(pool, cudaMemPoolAttrUsedMemCurrent),
           (unsigned long long)pool_attr(pool, cudaMemPoolAttrReservedMemCurrent),
           pool_attr(pool, cudaMemPoolAttrUsedMemHigh) >= bytes ? "yes" : "no", host[9]);
    uint64_t zero = 0;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    printf("used high after reset %llu\n", (unsigned long long)pool_attr(pool, cudaMemPoolAttrUsedMemHigh));

    // The created pool as the device's current pool serves cudaMallocAsync.
    CHECK(cudaDeviceSetMemPool(0, pool));
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    printf("created pool is current: %s\n", cur == pool ? "yes" : "no");
    CHECK(cudaMallocAsync((void **)&d, bytes, s));
    printf("cudaMallocAsync drew from it: %s\n", pool_attr(pool, cudaMemPoolAttrUsedMemCurrent) >= bytes ? "yes" : "no");
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaStreamSynchronize(s));

    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = 0;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    CHECK(cudaMemPoolGetAccess(&flags, pool, &loc));
    printf("access from its device: %s\n", flags == cudaMemAccessFlagsProtReadWrite ? "read-write" : "other");
    CHECK(cudaDeviceSetMemPool(0, def));
    CHECK(cudaMemPoolDestroy(pool));
    CHECK(cudaStreamDestroy(s));
    free(host);
    return 0;
}
