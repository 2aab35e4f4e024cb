// Managed memory (docs/memory-models.md): one pointer from
// cudaMallocManaged serves the host and kernels.  The host writes, a kernel
// reads and updates in place, the host reads after synchronizing; a kernel
// fills fresh memory the host then reads; advice and prefetches are
// accepted and reported back by cudaMemRangeGetAttribute.  Where the
// device has no managed memory (managedMemory 0: Tandem over TCP) it says
// what cudaMallocManaged answers and stops.  Diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "managed_memory: %s failed at %s:%d: %s (%s)\n", #call,    \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void managed_scale(unsigned int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 3u * p[i] + 1u;
}

__global__ void managed_fill(unsigned int *p, int n, unsigned int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned int)i * k + 7u;
}

static uint64_t sum_of(const unsigned int *p, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

static int range_attr(cudaMemRangeAttribute a, const void *p, size_t n)
{
    int v = -100;
    CHECK(cudaMemRangeGetAttribute(&v, sizeof(v), a, p, n));
    return v;
}

int main()
{
    const int n = 1 << 16, threads = 256, blocks = (n + threads - 1) / threads;
    const size_t bytes = n * sizeof(unsigned int);
    cudaDeviceProp prop;
    int managed = -1;

    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    printf("managedMemory %d (attribute %d)\n", prop.managedMemory, managed);
    if (!managed) {
        void *p = NULL;
        printf("cudaMallocManaged: %s\n", cudaGetErrorName(cudaMallocManaged(&p, 4096)));
        cudaGetLastError();
        return 0;
    }

    unsigned int *p, *f;
    CHECK(cudaMallocManaged((void **)&p, bytes));
    cudaPointerAttributes pa;
    CHECK(cudaPointerGetAttributes(&pa, p + 5));
    printf("pointer type managed: %s, device pointer is the pointer: %s\n",
           pa.type == cudaMemoryTypeManaged ? "yes" : "no", pa.devicePointer == p + 5 ? "yes" : "no");

    // Host writes, the kernel reads and updates in place, the host reads.
    for (int i = 0; i < n; i++)
        p[i] = (unsigned int)i;
    for (int round = 0; round < 2; round++) {
        managed_scale<<<blocks, threads>>>(p, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        printf("round %d: p[0]=%u p[%d]=%u sum=%llu\n", round, p[0], n - 1, p[n - 1],
               (unsigned long long)sum_of(p, n));
        p[0] = 1000u;   // a host write the next round's kernel must see
    }

    // A kernel fills fresh managed memory (flags cudaMemAttachHost, then
    // attached to the stream it runs on); the host reads it.
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMallocManaged((void **)&f, bytes, cudaMemAttachHost));
    CHECK(cudaStreamAttachMemAsync(s, f, 0, cudaMemAttachSingle));
    managed_fill<<<blocks, threads, 0, s>>>(f, n, 5u);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    printf("filled: f[0]=%u f[1]=%u f[%d]=%u sum=%llu\n", f[0], f[1], n - 1, f[n - 1],
           (unsigned long long)sum_of(f, n));

    // Copies between managed and device memory.
    unsigned int *d;
    CHECK(cudaMalloc((void **)&d, bytes));
    CHECK(cudaMemcpy(d, f, bytes, cudaMemcpyHostToDevice));
    managed_scale<<<blocks, threads>>>(d, n);
    CHECK(cudaMemcpy(p, d, bytes, cudaMemcpyDeviceToHost));
    printf("copied back: p[1]=%u sum=%llu\n", p[1], (unsigned long long)sum_of(p, n));

    // Advice and prefetches, and what the range says of them.
    cudaMemLocation dev0 = { cudaMemLocationTypeDevice, 0 }, host = { cudaMemLocationTypeHost, 0 };
    CHECK(cudaMemAdvise(p, bytes / 2, cudaMemAdviseSetReadMostly, dev0));
    CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, host));
    CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, dev0));
    CHECK(cudaMemPrefetchAsync(p, bytes, dev0, 0, s));
    CHECK(cudaStreamSynchronize(s));
    printf("read mostly: first half %d, whole %d\n", range_attr(cudaMemRangeAttributeReadMostly, p, bytes / 2),
           range_attr(cudaMemRangeAttributeReadMostly, p, bytes));
    printf("preferred location %d, last prefetch location %d\n",
           range_attr(cudaMemRangeAttributePreferredLocation, p, bytes),
           range_attr(cudaMemRangeAttributeLastPrefetchLocation, p, bytes));
    int accessed[3] = { -100, -100, -100 };
    CHECK(cudaMemRangeGetAttribute(accessed, sizeof(accessed), cudaMemRangeAttributeAccessedBy, p, bytes));
    printf("accessed by %d %d %d\n", accessed[0], accessed[1], accessed[2]);
    CHECK(cudaMemAdvise(p, bytes / 2, cudaMemAdviseUnsetReadMostly, dev0));
    printf("read mostly after unset: %d\n", range_attr(cudaMemRangeAttributeReadMostly, p, bytes / 2));
    // Bad input, refused as CUDA refuses it.
    void *q = NULL;
    int v = 0;
    printf("size 0: %s\n", cudaGetErrorName(cudaMallocManaged(&q, 0)));
    printf("flags 0: %s\n", cudaGetErrorName(cudaMallocManaged(&q, 4096, 0)));
    printf("advice for device 1: %s\n",
           cudaGetErrorName(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, cudaMemLocation{cudaMemLocationTypeDevice, 1})));
    printf("range attribute of 0 bytes: %s\n",
           cudaGetErrorName(cudaMemRangeGetAttribute(&v, sizeof(v), cudaMemRangeAttributeReadMostly, p, 0)));
    cudaGetLastError();

    CHECK(cudaFree(d));
    CHECK(cudaFree(f));
    CHECK(cudaFree(p));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
