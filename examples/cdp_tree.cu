// Dynamic parallelism (CDP, built with -rdc=true and linked with cudadevrt):
// a kernel that launches kernels from the device.  tree(depth) runs two
// threads and launches two trees of depth + 1 until max_depth, so the host
// can check the total exactly: 2^(max_depth+1) - 1 launches of 2 threads.
//   cdp_tree [max_depth]   (1..10, default 6)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "cdp_tree: %s failed at %s:%d: %s (%s)\n", #call,          \
                    __FILE__, __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void tree(int depth, int max_depth, unsigned int *threads, unsigned int *deepest)
{
    atomicAdd(threads, 1u);
    atomicMax(deepest, (unsigned int)depth);
    if (threadIdx.x == 0 && depth < max_depth) {
        if (depth == 0)
            printf("device: depth 0 launches two trees of depth 1 (max %d)\n", max_depth);
        tree<<<1, 2>>>(depth + 1, max_depth, threads, deepest);
        tree<<<1, 2>>>(depth + 1, max_depth, threads, deepest);
    }
}

int main(int argc, char **argv)
{
    int max_depth = argc > 1 ? atoi(argv[1]) : 6;
    if (max_depth < 1 || max_depth > 10) {
        fprintf(stderr, "cdp_tree: max_depth must be 1..10\n");
        return 2;
    }
    unsigned int *d = nullptr, h[2] = { 0, 0 };
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemset(d, 0, sizeof(h)));
    tree<<<1, 2>>>(0, max_depth, d, d + 1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    unsigned int want = 2u * ((1u << (max_depth + 1)) - 1u);
    printf("cdp_tree: max_depth %d: %u threads ran (expected %u), deepest level %u: %s\n", max_depth, h[0], want,
           h[1], h[0] == want && h[1] == (unsigned int)max_depth ? "PASS" : "FAIL");
    CHECK(cudaFree(d));
    return h[0] == want && h[1] == (unsigned int)max_depth ? 0 : 1;
}
