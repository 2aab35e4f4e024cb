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

    // cudaHostRegister'ed memory of the program's own: copies from and to
    // it, the errors of registering it twice and unregistering it twice.
    {
        const size_t bytes = 1 << 20;
        unsigned char *buf = (unsigned char *)aligned_alloc(4096, bytes), *dev;
        unsigned int flags = 0;
        cudaPointerAttributes pa;
        for (size_t i = 0; i < bytes; i++)
            buf[i] = (unsigned char)(i * 7);
        CHECK(cudaHostRegister(buf, bytes, cudaHostRegisterDefault));
        CHECK(cudaHostGetFlags(&flags, buf + 10));
        CHECK(cudaPointerGetAttributes(&pa, buf));
        printf("registered: pointer type host %s\n", pa.type == cudaMemoryTypeHost ? "yes" : "no");
        printf("registered again: %s\n", cudaGetErrorName(cudaHostRegister(buf + 4096, 4096, 0)));
        cudaGetLastError();
        CHECK(cudaMalloc(&dev, bytes));
        CHECK(cudaMemcpyAsync(dev, buf, bytes, cudaMemcpyHostToDevice, 0));
        CHECK(cudaMemsetAsync(dev, 0x5a, 16, 0));
        CHECK(cudaMemcpyAsync(buf, dev, bytes, cudaMemcpyDeviceToHost, 0));
        CHECK(cudaDeviceSynchronize());
        uint64_t sum = 0;
        for (size_t i = 0; i < bytes; i++)
            sum += buf[i];
        printf("registered round trip: buf[0]=%u buf[20]=%u sum=%llu\n", buf[0], buf[20], (unsigned long long)sum);
        CHECK(cudaHostUnregister(buf));
        printf("unregistered again: %s\n", cudaGetErrorName(cudaHostUnregister(buf)));
        cudaGetLastError();
        CHECK(cudaFree(dev));
        free(buf);
    }
    if (!prop.canMapHostMemory) {
        // As on a device that cannot map host memory: the allocation
        // succeeds, asking for its device pointer fails.
        void *p, *d;
        CHECK(cudaHostAlloc(&p, 4096, cudaHostAllocMapped));
        printf("device pointer of mapped memory: %s\n", cudaGetErrorName(cudaHostGetDevicePointer(&d, p, 0)));
        cudaGetLastError();
        CHECK(cudaFreeHost(p));
        return 0;
    }

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
