// A latency-bound guest for the SM-share tests (tests/integration/test_shares.c,
// docs/sm-shares.md): K kernels of 64 blocks, each waited for, each one's
// latency printed as "kernel I MS"; then the data is checked against the host
// and "ok" printed.  The kernel is increment_loop's (the same name and body),
// so the sim backend runs its twin.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        cudaError_t err_ = (call);                                                              \
        if (err_ != cudaSuccess) {                                                              \
            fprintf(stderr, "share_probe: %s failed at line %d: %s\n", #call, __LINE__,         \
                    cudaGetErrorName(err_));                                                    \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

__global__ void increment(unsigned int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1u + (unsigned int)(i % 7);
}

int main(int argc, char **argv)
{
    const int blocks = 64, threads = 32, n = blocks * threads;
    int kernels = argc > 1 ? atoi(argv[1]) : 4;
    static unsigned int x[blocks * threads];
    unsigned int *dx;

    if (kernels < 1)
        kernels = 1;
    CHECK(cudaMalloc(&dx, sizeof(x)));
    CHECK(cudaMemset(dx, 0, sizeof(x)));
    for (int k = 0; k < kernels; k++) {
        auto t0 = std::chrono::steady_clock::now();
        increment<<<blocks, threads>>>(dx, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        printf("kernel %d %.3f\n", k, ms);
    }
    CHECK(cudaMemcpy(x, dx, sizeof(x), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (x[i] != (unsigned int)kernels * (1u + (unsigned int)(i % 7))) {
            fprintf(stderr, "share_probe: word %d is %u, want %u\n", i, x[i],
                    (unsigned int)kernels * (1u + (unsigned int)(i % 7)));
            return 1;
        }
    CHECK(cudaFree(dx));
    printf("ok\n");
    return 0;
}
