// streamcluster on the device: sc_init assigns every point to the first
// centre; per candidate, sc_gain computes each point's saving (per-block
// sums and per-point flags, both read back by the host), and sc_commit
// reassigns the points when the host opens the candidate.  Integer
// arithmetic throughout.  Sim twins: server/sim_kernels/bench_streamcluster.c.
#include <vector>

#include "app.h"
#include "bench.h"
#include "streamcluster.h"

typedef unsigned long long u64;

__device__ unsigned dist(const int *pts, int n, int i, const int *c)
{
    unsigned sum = 0;

    for (int d = 0; d < SC_DIMS; d++) {
        int diff = pts[d * n + i] - c[d];
        sum += (unsigned)(diff * diff);
    }
    return sum;
}

__global__ void sc_init(const int *pts, int n, const int *cand, unsigned *cost, int *assign)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        cost[i] = dist(pts, n, i, cand);
        assign[i] = 0;
    }
}

// flags[i] = 1 if point i is closer to the candidate than to its centre;
// partial[block] = the block's total saving.
__global__ void sc_gain(const int *pts, int n, const int *cand, const unsigned *cost, unsigned char *flags,
                        u64 *partial)
{
    __shared__ u64 block_saving;
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (threadIdx.x == 0)
        block_saving = 0;
    __syncthreads();
    if (i < n) {
        unsigned d = dist(pts, n, i, cand), c = cost[i];
        flags[i] = d < c;
        if (d < c)
            atomicAdd(&block_saving, (u64)(c - d));
    }
    __syncthreads();
    if (threadIdx.x == 0)
        partial[blockIdx.x] = block_saving;
}

__global__ void sc_commit(const int *pts, int n, const int *cand, int cand_idx, unsigned *cost, int *assign)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        unsigned d = dist(pts, n, i, cand);
        if (d < cost[i]) {
            cost[i] = d;
            assign[i] = cand_idx;
        }
    }
}

static int sc_run_device(void *state)
{
    sc_state *s = (sc_state *)state;
    size_t n = (size_t)s->n;
    unsigned blocks = (unsigned)((n + SC_THREADS - 1) / SC_THREADS);
    std::vector<u64> partial(blocks);
    std::vector<unsigned char> flags(n);
    int32_t c[SC_DIMS];
    int *pts, *cand, *assign;
    unsigned *cost;
    unsigned char *dflags;
    u64 *dpartial;

    BENCH_CHECK(cudaMalloc(&pts, n * SC_DIMS * 4));
    BENCH_CHECK(cudaMalloc(&cand, sizeof(c)));
    BENCH_CHECK(cudaMalloc(&cost, n * 4));
    BENCH_CHECK(cudaMalloc(&assign, n * 4));
    BENCH_CHECK(cudaMalloc(&dflags, n));
    BENCH_CHECK(cudaMalloc(&dpartial, blocks * sizeof(u64)));
    BENCH_CHECK(cudaMemcpy(pts, s->pts, n * SC_DIMS * 4, cudaMemcpyHostToDevice));
    sc_coords(s, 0, c);
    BENCH_CHECK(cudaMemcpy(cand, c, sizeof(c), cudaMemcpyHostToDevice));
    sc_init<<<blocks, SC_THREADS>>>(pts, s->n, cand, cost, assign);
    s->opened = 1;
    s->switched = 0;
    for (int t = 0; t < s->iters; t++) {
        u64 saving = 0, movers = 0;
        sc_coords(s, s->cand[t], c);
        BENCH_CHECK(cudaMemcpy(cand, c, sizeof(c), cudaMemcpyHostToDevice));
        sc_gain<<<blocks, SC_THREADS>>>(pts, s->n, cand, cost, dflags, dpartial);
        BENCH_CHECK(cudaMemcpy(partial.data(), dpartial, blocks * sizeof(u64), cudaMemcpyDeviceToHost));
        BENCH_CHECK(cudaMemcpy(flags.data(), dflags, n, cudaMemcpyDeviceToHost));
        for (unsigned b = 0; b < blocks; b++)
            saving += partial[b];
        for (size_t i = 0; i < n; i++)
            movers += flags[i];
        if (saving <= s->facility)
            continue;
        sc_commit<<<blocks, SC_THREADS>>>(pts, s->n, cand, s->cand[t], cost, assign);
        s->opened++;
        s->switched += movers;
    }
    BENCH_CHECK(cudaGetLastError());
    BENCH_CHECK(cudaMemcpy(s->cost, cost, n * 4, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaMemcpy(s->assign, assign, n * 4, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaFree(pts));
    BENCH_CHECK(cudaFree(cand));
    BENCH_CHECK(cudaFree(cost));
    BENCH_CHECK(cudaFree(assign));
    BENCH_CHECK(cudaFree(dflags));
    BENCH_CHECK(cudaFree(dpartial));
    return 0;
}

int main(int argc, char **argv)
{
    static const bench_app app = { "streamcluster", "SIZE: points (16 coordinates each); --iters: candidates",
                                   SC_ITERS, sc_setup, sc_run_device, sc_run_host, sc_summarize, sc_teardown };

    return bench_app_main(&app, argc, argv);
}
