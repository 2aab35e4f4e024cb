// nw on the device: per round, one launch of nw_init, one launch of
// nw_diagonal per anti-diagonal of 16 x 16 tiles (each block of 16 threads
// fills one tile by an inner wavefront in shared memory), and a read-back
// of the last row.  Sim twins:
// server/sim_kernels/bench_nw.c.
#include "app.h"
#include "bench.h"
#include "nw.h"

// Row 0 and column 0: the gap penalties.  Every other cell is written by
// nw_diagonal before it is read.
__global__ void nw_init(int *score, int n, int penalty)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i <= n) {
        score[i] = -i * penalty;
        score[i * (n + 1)] = -i * penalty;
    }
}

// The tiles (br, bc) with br + bc == diag, one per block, blockDim.x == 16.
__global__ void nw_diagonal(int *score, const int *seq_a, const int *seq_b, const int *sub, int n, int diag,
                            int penalty)
{
    __shared__ int t[NW_TILE + 1][NW_TILE + 1];
    int nb = n / NW_TILE, w = n + 1, tx = threadIdx.x;
    int br = (diag < nb ? 0 : diag - nb + 1) + blockIdx.x, bc = diag - br;
    int r0 = br * NW_TILE, c0 = bc * NW_TILE;

    t[0][tx + 1] = score[r0 * w + c0 + tx + 1];
    t[tx + 1][0] = score[(r0 + tx + 1) * w + c0];
    if (tx == 0)
        t[0][0] = score[r0 * w + c0];
    __syncthreads();
    int a = seq_a[r0 + tx + 1];
    for (int k = 0; k < 2 * NW_TILE - 1; k++) {
        int i = tx + 1, j = k - tx + 1;
        if (j >= 1 && j <= NW_TILE) {
            int m = t[i - 1][j - 1] + sub[a * NW_SYMBOLS + seq_b[c0 + j]];
            m = max(m, t[i - 1][j] - penalty);
            m = max(m, t[i][j - 1] - penalty);
            t[i][j] = m;
        }
        __syncthreads();
    }
    for (int i = 1; i <= NW_TILE; i++)
        score[(r0 + i) * w + c0 + tx + 1] = t[i][tx + 1];
}

static int nw_run_device(void *state)
{
    nw_state *s = (nw_state *)state;
    size_t w = (size_t)s->n + 1, sub_bytes = NW_SYMBOLS * NW_SYMBOLS * 4;
    int *score, *queries, *ref, *sub, nb = s->n / NW_TILE;

    BENCH_CHECK(cudaMalloc(&score, w * w * 4));
    BENCH_CHECK(cudaMalloc(&queries, (size_t)s->rounds * w * 4));
    BENCH_CHECK(cudaMalloc(&ref, w * 4));
    BENCH_CHECK(cudaMalloc(&sub, sub_bytes));
    BENCH_CHECK(cudaMemcpy(queries, s->queries, (size_t)s->rounds * w * 4, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(ref, s->ref, w * 4, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(sub, s->sub, sub_bytes, cudaMemcpyHostToDevice));
    for (int r = 0; r < s->rounds; r++) {
        nw_init<<<(unsigned)((w + 255) / 256), 256>>>(score, s->n, s->penalty);
        for (int d = 0; d < 2 * nb - 1; d++) {
            int first = d < nb ? 0 : d - nb + 1, last = d < nb ? d : nb - 1;
            nw_diagonal<<<last - first + 1, NW_TILE>>>(score, queries + (size_t)r * w, ref, sub, s->n, d,
                                                       s->penalty);
        }
        BENCH_CHECK(cudaGetLastError());
        BENCH_CHECK(cudaMemcpy(s->last_rows + (size_t)r * w, score + (w - 1) * w, w * 4, cudaMemcpyDeviceToHost));
    }
    BENCH_CHECK(cudaMemcpy(s->score, score, w * w * 4, cudaMemcpyDeviceToHost));
    BENCH_CHECK(cudaFree(score));
    BENCH_CHECK(cudaFree(queries));
    BENCH_CHECK(cudaFree(ref));
    BENCH_CHECK(cudaFree(sub));
    return 0;
}

int main(int argc, char **argv)
{
    static const bench_app app = {
        "nw", "SIZE: sequence length, a multiple of 16 (the matrix is (SIZE+1)^2 ints); --iters: rounds",
        NW_ROUNDS, nw_setup, nw_run_device, nw_run_host, nw_summarize, nw_teardown,
    };

    return bench_app_main(&app, argc, argv);
}
