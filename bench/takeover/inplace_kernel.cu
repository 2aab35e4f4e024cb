// The in-place step on the device (inplace.h).  The name and signature are
// tests/faults/victim.cu's victim_step so that the sim backend's twin of
// that kernel runs it; the arithmetic must stay the same as there.
#include "inplace.h"

__global__ void victim_step(unsigned *x, int n, unsigned iter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        x[i] = x[i] * 1664525u + 1013904223u + (iter ^ (unsigned)i);
}

cudaError_t inplace_launch(uint32_t *dx, int n, uint32_t iter)
{
    victim_step<<<(unsigned)((n + INPLACE_BLOCK - 1) / INPLACE_BLOCK), INPLACE_BLOCK>>>(dx, n, iter);
    return cudaGetLastError();
}
