// Pinned memory by its host pointer (docs/memory-models.md, "Pinned memory
// by its host pointer"): natively the host pointer of cudaMallocHost memory
// is also its device address.  A kernel spins on a pinned flag until the
// host sets it while the kernel runs (UnifiedMemoryPerf's latch), on a
// stream and on the legacy stream; a kernel updates a pinned array in
// place through its host pointer and sees what the host wrote before the
// launch; cudaHostGetDevicePointer answers the host pointer; copies from
// and to pinned memory stay correct.  Deterministic output, the same
// natively and through Tandem over shm and TCP.  A regression hangs in the
// spin: the test that runs this kills it after a timeout.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "pinned_latch: %s failed at %s:%d: %s (%s)\n", #call,          \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// The same kernels (names and semantics) as examples/mapped_memory.cu and
// examples/managed_memory_patterns.cu, whose sim twins serve them.
__global__ void mapped_scale(unsigned int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 3u * p[i] + 1u;
}

__global__ void mm_spin_until_set(volatile unsigned *latch, unsigned *seen)
{
    unsigned v;
    while ((v = *latch) == 0)
        ;
    *seen = v;
}

static uint64_t sum_of(const unsigned *p, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

int main()
{
    const int n = 5000, threads = 256;
    unsigned *flag, *seen, got = 0, *arr, *back, *d;
    cudaStream_t s;

    CHECK(cudaMallocHost((void **)&flag, sizeof(unsigned)));
    CHECK(cudaMalloc((void **)&seen, sizeof(unsigned)));
    CHECK(cudaStreamCreate(&s));

    // The latch on a stream, released by cudaStreamSynchronize's wait.
    *(volatile unsigned *)flag = 0;
    mm_spin_until_set<<<1, 1, 0, s>>>(flag, seen);
    CHECK(cudaGetLastError());
    *(volatile unsigned *)flag = 5;
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(&got, seen, sizeof(got), cudaMemcpyDeviceToHost));
    printf("latch on a stream: the kernel saw %u\n", got);

    // On the legacy stream, released by cudaDeviceSynchronize's wait.
    *(volatile unsigned *)flag = 0;
    mm_spin_until_set<<<1, 1>>>(flag, seen);
    CHECK(cudaGetLastError());
    *(volatile unsigned *)flag = 9;
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&got, seen, sizeof(got), cudaMemcpyDeviceToHost));
    printf("latch on the legacy stream: the kernel saw %u, flag %u\n", got, *flag);

    // Work queued behind the spinning kernel on its stream (copies of
    // 32 MiB from pinned memory, as UnifiedMemoryPerf queues its uploads
    // behind its latch) waits for the latch, and then runs.
    {
        const size_t big = 32u << 20;
        unsigned char *hb, *db;
        CHECK(cudaMallocHost((void **)&hb, big));
        CHECK(cudaMalloc((void **)&db, big));
        for (size_t i = 0; i < big; i++)
            hb[i] = (unsigned char)(i * 13);
        *(volatile unsigned *)flag = 0;
        mm_spin_until_set<<<1, 1, 0, s>>>(flag, seen);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(db, hb, big, cudaMemcpyHostToDevice, s));
        CHECK(cudaMemcpyAsync(db, hb + big / 2, big / 2, cudaMemcpyHostToDevice, s));
        *(volatile unsigned *)flag = 7;
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaMemcpy(&got, seen, sizeof(got), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hb, db, big, cudaMemcpyDeviceToHost));
        uint64_t sum = 0;
        for (size_t i = 0; i < big; i++)
            sum += hb[i];
        printf("latch with copies queued behind it: the kernel saw %u, sum=%llu\n", got, (unsigned long long)sum);
        CHECK(cudaFree(db));
        CHECK(cudaFreeHost(hb));
    }

    // A pinned array updated in place by its host pointer.
    CHECK(cudaMallocHost((void **)&arr, n * sizeof(unsigned)));
    CHECK(cudaMallocHost((void **)&back, n * sizeof(unsigned)));
    for (int i = 0; i < n; i++)
        arr[i] = (unsigned)i;
    for (int round = 0; round < 2; round++) {
        mapped_scale<<<(n + threads - 1) / threads, threads>>>(arr, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        printf("round %d: arr[0]=%u arr[%d]=%u sum=%llu\n", round, arr[0], n - 1, arr[n - 1],
               (unsigned long long)sum_of(arr, n));
        arr[0] = 1000u;   // a host write the next round's kernel must see
    }
    void *dp = NULL;
    CHECK(cudaHostGetDevicePointer(&dp, arr, 0));
    printf("device pointer is the host pointer: %s\n", dp == (void *)arr ? "yes" : "no");

    // Copies from and to pinned memory, on a stream.
    CHECK(cudaMalloc((void **)&d, n * sizeof(unsigned)));
    CHECK(cudaMemcpyAsync(d, arr, n * sizeof(unsigned), cudaMemcpyHostToDevice, s));
    mapped_scale<<<(n + threads - 1) / threads, threads, 0, s>>>(d, n);
    CHECK(cudaMemcpyAsync(back, d, n * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("copied: back[0]=%u sum=%llu, arr sum=%llu\n", back[0], (unsigned long long)sum_of(back, n),
           (unsigned long long)sum_of(arr, n));

    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(back));
    CHECK(cudaFreeHost(arr));
    CHECK(cudaFreeHost(flag));
    CHECK(cudaFree(seen));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
