/* A guest in plain C that allocates past its memory budget (test_onboard): argv[1] cudaMallocs of
 * argv[2] MiB each, one result a line; after the first failure it frees one block and allocates
 * once more (the session goes on after a refused allocation); then cudaMemGetInfo's total. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_BLOCKS 64

int main(int argc, char **argv)
{
    void *blocks[MAX_BLOCKS] = { 0 };
    int n = argc > 2 ? atoi(argv[1]) : 0, ok = 0;
    size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 10) << 20 : 0;
    size_t free_b = 0, total_b = 0;

    if (n < 1 || n > MAX_BLOCKS || bytes == 0) {
        fprintf(stderr, "usage: mem-budget-check COUNT MIB (COUNT 1..%d)\n", MAX_BLOCKS);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        cudaError_t e = cudaMalloc(&blocks[i], bytes);
        printf("malloc %d: %s\n", i, cudaGetErrorName(e));
        if (e == cudaSuccess) {
            ok++;
            continue;
        }
        fprintf(stderr, "cudaMalloc %d of %zu MiB: %s\n", i, bytes >> 20, cudaGetErrorString(e));
        if (ok) {
            cudaFree(blocks[0]);
            printf("after a free: %s\n", cudaGetErrorName(cudaMalloc(&blocks[0], bytes)));
        }
        break;
    }
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        printf("total %zu MiB\n", total_b >> 20);
    return 0;
}
