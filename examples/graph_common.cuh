// What graph_capture.cu and graph_explicit.cu share: the kernels (the same
// as streams_events.cu, so the sim backend's twins serve all three), the
// checksum both print and one checked launch.  The includer defines CHECK.
#ifndef TANDEM_EXAMPLES_GRAPH_COMMON_CUH
#define TANDEM_EXAMPLES_GRAPH_COMMON_CUH

#include <cstdint>
#include <cuda_runtime.h>

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

// One launch of exec after spoiling every result (d_buf of `bytes`, d_keep
// of half): the checksum of what it made in d_keep.
static uint64_t launch_once(cudaGraphExec_t exec, cudaStream_t s, unsigned int *d_buf, unsigned int *d_keep,
                            unsigned int *h_out, size_t bytes)
{
    CHECK(cudaMemsetAsync(d_buf, 0xff, bytes, s));
    CHECK(cudaMemsetAsync(d_keep, 0xff, bytes / 2, s));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h_out, d_keep, bytes / 2, cudaMemcpyDeviceToHost));
    return checksum(h_out, (int)(bytes / 2 / sizeof(unsigned int)));
}

#endif
