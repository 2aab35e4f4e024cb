// srad on the device: per iteration a memset, srad_reduce, a 16-byte
// read-back, then srad_coef and srad_update over 16 x 16 blocks.  Built with
// --fmad=false (bench/CMakeLists.txt): every float operation is rounded on
// its own, as in the host reference and the sim twins
// (server/sim_kernels/bench_srad.c).
#include <utility>

#include "app.h"
#include "bench.h"
#include "srad.h"

typedef unsigned long long u64;

#define SRAD_BLOCK 16
#define REDUCE_THREADS 256
#define REDUCE_BLOCKS 1024

// sums[0] += every pixel, sums[1] += every (pixel >> 8)^2.  Integer
// atomics: the result does not depend on the order the threads run in.
__global__ void srad_reduce(const int *img, int npix, u64 *sums)
{
    __shared__ u64 b1, b2;
    u64 s1 = 0, s2 = 0;

    if (threadIdx.x == 0)
        b1 = 0, b2 = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < npix; i += gridDim.x * blockDim.x) {
        unsigned v = (unsigned)img[i], q = v >> 8;
        s1 += v;
        s2 += (u64)q * q;
    }
    atomicAdd(&b1, s1);
    atomicAdd(&b2, s2);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&sums[0], b1);
        atomicAdd(&sums[1], b2);
    }
}

__device__ float px(const int *img, int p)
{
    return (float)img[p] * (1.0f / SRAD_ONE);
}

// Differences to the north, south, west and east neighbours, edges clamped.
__device__ void derivatives(const int *img, int n, int y, int x, float d[4])
{
    float jc = px(img, y * n + x);

    d[0] = px(img, (y > 0 ? y - 1 : 0) * n + x) - jc;
    d[1] = px(img, (y + 1 < n ? y + 1 : n - 1) * n + x) - jc;
    d[2] = px(img, y * n + (x > 0 ? x - 1 : 0)) - jc;
    d[3] = px(img, y * n + (x + 1 < n ? x + 1 : n - 1)) - jc;
}

__global__ void srad_coef(const int *img, float *coef, int n, float q0sqr)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    float d[4];

    if (x >= n || y >= n)
        return;
    float jc = px(img, y * n + x);
    derivatives(img, n, y, x, d);
    float g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc);
    float l = (d[0] + d[1] + d[2] + d[3]) / jc;
    float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    coef[y * n + x] = !(c >= 0.0f) ? 0.0f : c > 1.0f ? 1.0f : c;
}

__global__ void srad_update(const int *img, const float *coef, int *out, int n, float lambda)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    float d[4];

    if (x >= n || y >= n)
        return;
    int p = y * n + x, ps = (y + 1 < n ? y + 1 : n - 1) * n + x, pe = y * n + (x + 1 < n ? x + 1 : n - 1);
    derivatives(img, n, y, x, d);
    float div = coef[p] * d[0] + coef[ps] * d[1] + coef[p] * d[2] + coef[pe] * d[3];
    float v = (px(img, p) + 0.25f * lambda * div) * (float)SRAD_ONE;
    if (!(v >= (float)SRAD_LO))
        v = (float)SRAD_LO;
    if (v > (float)SRAD_HI)
        v = (float)SRAD_HI;
    out[p] = __float2int_rn(v);
}

static int srad_run_device(void *state)
{
    srad_state *s = (srad_state *)state;
    size_t npix = (size_t)s->n * (size_t)s->n;
    unsigned tiles = (unsigned)((s->n + SRAD_BLOCK - 1) / SRAD_BLOCK);
    dim3 grid(tiles, tiles), block(SRAD_BLOCK, SRAD_BLOCK);
    int *img, *next;
    float *coef;
    u64 *sums, host_sums[2];

    BENCH_CHECK(cudaMalloc(&img, npix * 4));
    BENCH_CHECK(cudaMalloc(&next, npix * 4));
    BENCH_CHECK(cudaMalloc(&coef, npix * sizeof(float)));
    BENCH_CHECK(cudaMalloc(&sums, sizeof(host_sums)));
    BENCH_CHECK(cudaMemcpy(img, s->in, npix * 4, cudaMemcpyHostToDevice));
    for (int it = 0; it < s->iters; it++) {
        BENCH_CHECK(cudaMemset(sums, 0, sizeof(host_sums)));
        srad_reduce<<<REDUCE_BLOCKS, REDUCE_THREADS>>>(img, (int)npix, sums);
        BENCH_CHECK(cudaMemcpy(host_sums, sums, sizeof(host_sums), cudaMemcpyDeviceToHost));
        float q0sqr = srad_q0sqr(host_sums[0], host_sums[1], npix);
        srad_coef<<<grid, block>>>(img, coef, s->n, q0sqr);
        srad_update<<<grid, block>>>(img, coef, next, s->n, SRAD_LAMBDA);
        std::swap(img, next);
    }
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaMemcpy(s->out, img, npix * 4, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaFree(img));
    BENCH_CHECK(cudaFree(next));
    BENCH_CHECK(cudaFree(coef));
    BENCH_CHECK(cudaFree(sums));
    return 0;
}

int main(int argc, char **argv)
{
    static const bench_app app = { "srad", "SIZE: image side (SIZE x SIZE pixels); --iters: iterations",
                                   SRAD_ITERS, srad_setup, srad_run_device, srad_run_host, srad_summarize,
                                   srad_teardown };

    return bench_app_main(&app, argc, argv);
}
