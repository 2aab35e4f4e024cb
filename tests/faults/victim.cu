// The victim: a long loop of small kernels on its own data, synchronizing
// after each, then one line with an FNV-1a-64 checksum of the result.  The
// result depends only on the arguments, so a run next to a fault can be
// compared with a fault-free run.  Usage: victim [iterations] [n]
// Prints "victim: running" once the first iteration completed (test
// harnesses wait for it), and exits 1 with the error if any call fails.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void victim_step(unsigned *x, int n, unsigned iter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 1664525u + 1013904223u + (iter ^ (unsigned)i);
}

static void check(const char *what, long iter, cudaError_t e)
{
    if (e == cudaSuccess)
        return;
    printf("victim: died at iteration %ld (%s): %s (%d): %s\n", iter, what, cudaGetErrorName(e), (int)e,
           cudaGetErrorString(e));
    exit(1);
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    std::vector<unsigned> h((size_t)n);
    unsigned *x;
    uint64_t sum = 1469598103934665603ull;

    check("cudaMalloc", 0, cudaMalloc(&x, (size_t)n * sizeof(unsigned)));
    check("cudaMemset", 0, cudaMemset(x, 0, (size_t)n * sizeof(unsigned)));
    for (long it = 0; it < iters; it++) {
        victim_step<<<(n + 255) / 256, 256>>>(x, n, (unsigned)it);
        check("launch", it, cudaGetLastError());
        check("cudaDeviceSynchronize", it, cudaDeviceSynchronize());
        if (it == 0) {
            printf("victim: running\n");
            fflush(stdout);
        }
    }
    check("cudaMemcpy", iters, cudaMemcpy(h.data(), x, (size_t)n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned u : h)
        for (int k = 0; k < 4; k++) {
            sum ^= (u >> (8 * k)) & 0xffu;
            sum *= 1099511628211ull;
        }
    printf("victim iterations=%ld n=%d x[0]=%u checksum=%016llx\n", iters, n, h[0], (unsigned long long)sum);
    return 0;
}
