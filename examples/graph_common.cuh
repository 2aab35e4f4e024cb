// What graph_capture.cu and graph_explicit.cu share: the kernels (the same
// as streams_events.cu, so the sim backend's twins serve all three) and the
// checksum both print.
#ifndef TANDEM_EXAMPLES_GRAPH_COMMON_CUH
#define TANDEM_EXAMPLES_GRAPH_COMMON_CUH

#include <cstdint>

__global__ void se_transform(unsigned int *x, int n, unsigned int k, unsigned int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * k + ((unsigned int)i + base);
}

__global__ void se_combine(const unsigned int *a, const unsigned int *b, unsigned int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (a[i] ^ (b[i] >> 3)) + 7u * (unsigned int)i;
}

static uint64_t checksum(const unsigned int *v, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            h ^= (v[i] >> (8 * k)) & 0xffu;
            h *= 1099511628211ull;
        }
    return h;
}

#endif
