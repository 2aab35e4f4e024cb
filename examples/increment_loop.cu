// The canonical "in place, many launches" case: one buffer, one kernel that
// updates it in place, launched 1000 times back to back, then read once.
// Integer data, so the host reference reproduces the result exactly.
// Prints one line on stdout; diagnostics go to stderr.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "increment_loop: %s failed at %s:%d: %s (%s)\n", #call,    \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void increment(unsigned int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1u + (unsigned int)(i % 7);
}

static uint64_t fnv1a_u32(uint64_t h, uint32_t u)
{
    for (int k = 0; k < 4; k++) {
        h ^= (u >> (8 * k)) & 0xffu;
        h *= 1099511628211ull;
    }
    return h;
}

int main()
{
    const int n = 1 << 16, launches = 1000, threads = 256;
    size_t bytes = (size_t)n * sizeof(unsigned int);
    int count = 0;

    CHECK(cudaGetDeviceCount(&count));
    if (count < 1) {
        fprintf(stderr, "increment_loop: no CUDA device\n");
        return 1;
    }
    CHECK(cudaSetDevice(0));

    unsigned int *x = (unsigned int *)malloc(bytes);
    if (!x) {
        fprintf(stderr, "increment_loop: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        x[i] = (unsigned int)i * 3u;

    unsigned int *dx;
    CHECK(cudaMalloc(&dx, bytes));
    CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    for (int k = 0; k < launches; k++) {
        increment<<<(n + threads - 1) / threads, threads>>>(dx, n);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaMemcpy(x, dx, bytes, cudaMemcpyDeviceToHost));

    uint64_t sum = 0, h = 14695981039346656037ull;
    for (int i = 0; i < n; i++) {
        sum += x[i];
        h = fnv1a_u32(h, x[i]);
    }
    printf("increment_loop n=%d launches=%d x[0]=%u x[%d]=%u sum=%llu checksum=%016llx\n", n, launches,
           x[0], n - 1, x[n - 1], (unsigned long long)sum, (unsigned long long)h);

    CHECK(cudaFree(dx));
    free(x);
    return 0;
}
