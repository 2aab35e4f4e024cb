// Mapped (zero-copy) host memory (docs/memory-models.md): a kernel updates
// cudaHostAllocMapped memory in place through its device pointer, and the
// host reads the result from the same memory without a copy.  Where the
// device cannot map host memory (canMapHostMemory 0: Tandem over TCP) it
// says so and stops.  Diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "mapped_memory: %s failed at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void mapped_scale(unsigned int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 3u * p[i] + 1u;
}

int main()
{
    const int n = 1 << 16, threads = 256;
    cudaDeviceProp prop;
    int can_map = -1;

    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0));
    printf("canMapHostMemory %d (attribute %d)\n", prop.canMapHostMemory, can_map);
    if (!prop.canMapHostMemory)
        return 0;

    unsigned int *h, *d, *d100;
    unsigned int flags = 0;
    CHECK(cudaHostAlloc((void **)&h, n * sizeof(unsigned int), cudaHostAllocMapped));
    CHECK(cudaHostGetFlags(&flags, h));
    printf("flags include cudaHostAllocMapped: %s\n", (flags & cudaHostAllocMapped) ? "yes" : "no");
    for (int i = 0; i < n; i++)
        h[i] = (unsigned int)i;
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));
    CHECK(cudaHostGetDevicePointer((void **)&d100, h + 100, 0));
    printf("device pointer of h+100 is d+100: %s\n", d100 == d + 100 ? "yes" : "no");
    for (int round = 0; round < 2; round++) {
        mapped_scale<<<(n + threads - 1) / threads, threads>>>(d, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        uint64_t sum = 0;
        for (int i = 0; i < n; i++)
            sum += h[i];
        printf("round %d: h[0]=%u h[%d]=%u sum=%llu\n", round, h[0], n - 1, h[n - 1], (unsigned long long)sum);
        h[0] = 1000u;   // a host write the next round's kernel must see
    }
    CHECK(cudaFreeHost(h));
    return 0;
}
